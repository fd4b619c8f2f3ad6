"""``/v1/runs``: submit model outputs and follow them to their outcome."""

from __future__ import annotations

import asyncio
import contextlib
import time

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import NotFoundError
from regua.views.submissions import BatchAccepted, RunAccepted, RunList, RunView
from service.access.pools import check_task_access, may_read_run, runs_readable_by
from service.access.tokens import Principal
from service.api.deps import Ctx, Submitter
from service.api.schemas import BatchRequest, RunRequest
from service.api.text import Offset, displayable
from service.context import ServiceContext
from service.generation.revision_store import revision_view
from service.generation.store import generation_view
from service.pipeline.submit import Submission
from service.reports.runs import run_summary, run_view
from service.storage import Run

router = APIRouter(prefix="/v1/runs", tags=["runs"])

MAX_WAIT_S = 60.0
"""The longest ``wait_s`` a caller may ask ``GET /v1/runs/{id}`` for."""
WAIT_STEPS_S = (0.025, 0.1)
"""How often a waiting request looks at the run's status when announcements may be missed (one
small query, off the loop): the first step for the first :data:`QUICK_S` seconds, then the
second."""
QUICK_S = 2.0
SAFETY_TICK_S = 1.0
"""How often a waiting request looks anyway while every announcement reaches it."""


def _submission(req: RunRequest) -> Submission:
    return Submission(
        task=req.task,
        model_label=req.model.label,
        output=req.output,
        model_provider=req.model.provider,
        model_params=req.model.params,
        panel=req.panel,
    )


def _readable(principal: Principal, run: Run | None, run_id: str, session: Session) -> Run:
    """The run when the caller may read it; another submitter's run is "not found" too.

    Answering 403 there would tell a submitter which run ids exist (an existence oracle). A run
    of a hidden (reserved) task is read by admins only, whoever submitted it.
    """
    if run is None or not may_read_run(principal, run, session):
        raise NotFoundError(f"no run {run_id!r}")
    return run


def _may_submit(ctx: ServiceContext, caller: Principal, reqs: list[RunRequest]) -> None:
    """404 for an unknown task, 403 when a non-admin submits for a reserved task."""
    refs = [ctx.registry.get(r.task).ref for r in reqs]
    check_task_access(ctx.db, ctx.registry, caller, refs)


@router.post("", status_code=202, response_model=RunAccepted)
def create_run(body: RunRequest, ctx: Ctx, caller: Submitter) -> RunAccepted:
    """Store a model's raw reply for a task version and queue it (202).

    404 for an unknown task (listing known ones), 422 naming a malformed field (text that is
    not Unicode, NaN in params) or the position of malformed JSON, 413 for a too large body,
    429 with ``Retry-After`` when the queue or the submitter's share of it is full or the token
    is over its rate. Nothing is stored on error.
    """
    _may_submit(ctx, caller, [body])
    (run_id,) = ctx.submit([_submission(body)], caller.token_id)
    return RunAccepted(run_id=run_id, status="queued")


@router.post("/batch", status_code=202, response_model=BatchAccepted)
def create_runs(body: BatchRequest, ctx: Ctx, caller: Submitter) -> BatchAccepted:
    """Store and queue many runs at once: all of them, or none on any error.

    A batch larger than the queue or than one submitter's share answers 422: it can never fit.
    """
    _may_submit(ctx, caller, body.runs)
    ids = ctx.submit([_submission(r) for r in body.runs], caller.token_id)
    return BatchAccepted(
        batch_size=len(ids), runs=[RunAccepted(run_id=i, status="queued") for i in ids]
    )


@router.get("", response_model=RunList)
def list_runs(
    ctx: Ctx,
    caller: Submitter,
    status: str | None = Query(default=None, pattern="^(queued|running|done)$"),
    task: str | None = None,
    limit: int = Query(default=100, ge=1, le=1000),
    offset: Offset = 0,
) -> RunList:
    """Runs visible to the caller (own runs for submitters, all for admins), newest first."""
    with ctx.db.read() as s:
        q = select(Run).order_by(Run.submitted_at.desc(), Run.id).limit(limit).offset(offset)
        q = q.where(runs_readable_by(caller, s))
        if status:
            q = q.where(Run.status == status)
        if task:
            q = q.where(Run.task_ref == task)
        runs = [run_summary(r, include_model=True) for r in s.scalars(q)]
    return RunList(runs=runs, limit=limit, offset=offset)


@router.get("/{run_id}", response_model=RunView)
async def get_run(
    run_id: str,
    ctx: Ctx,
    caller: Submitter,
    wait_s: float = Query(
        default=0.0,
        ge=0.0,
        le=MAX_WAIT_S,
        description="Wait up to this many seconds for the run to be done before answering",
    ),
) -> RunView:
    """One run: its status, outcome, results, stage records and artifacts.

    Status (queued | running | done), outcome with cause, per-criterion results with verdicts
    and evidence, the stage records and the artifact chain of the run. With ``wait_s`` (0-60,
    422 outside) the answer comes as soon as the run is done, or after ``wait_s`` seconds with
    the run as it is then (a long poll: the wait holds no server thread, and wakes when the
    transaction that finishes the run commits, on any process). 404 for an unknown
    run, at once.
    """
    if wait_s > 0:
        with ctx.run_watch.waiting(run_id) as woken:  # before the first look: nothing is missed
            if await run_in_threadpool(_readable_status, ctx, caller, run_id) != "done":
                await _wait_done(ctx, run_id, woken, wait_s)
    return await run_in_threadpool(_run_view, ctx, caller, run_id)


async def _wait_done(ctx: ServiceContext, run_id: str, woken: asyncio.Event, wait_s: float) -> None:
    """Wait until the run is announced done (or ``wait_s`` passed), then look at its status.

    With every announcement reaching this process, the status is read only when woken and on a
    slow safety tick; otherwise (a listener being re-opened) on the quick ticks as well.
    """
    start = time.monotonic()
    while (left := start + wait_s - time.monotonic()) > 0:
        if ctx.run_watch.live:
            tick = SAFETY_TICK_S
        else:
            tick = WAIT_STEPS_S[0] if time.monotonic() - start < QUICK_S else WAIT_STEPS_S[1]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(woken.wait(), min(tick, left))
        woken.clear()
        if await run_in_threadpool(run_status, ctx, run_id) == "done":
            return


def _readable_status(ctx: ServiceContext, caller: Principal, run_id: str) -> str:
    with ctx.db.read() as s:
        return _readable(caller, s.get(Run, run_id), run_id, s).status


def run_status(ctx: ServiceContext, run_id: str) -> str | None:
    """The run's status alone (what a waiting request looks at)."""
    with ctx.db.read() as s:
        return s.scalar(select(Run.status).where(Run.id == run_id))


def _run_view(ctx: ServiceContext, caller: Principal, run_id: str) -> RunView:
    with ctx.db.read() as s:
        run = _readable(caller, s.get(Run, run_id), run_id, s)
        record = run_view(s, run, include_model=True, leaks=caller.is_admin)
        generation = generation_view(s, run_id)
        revision = revision_view(s, run_id)
    if record.model is not None:  # params stored before unstorable text was refused
        record.model.params = displayable(record.model.params)
    return RunView(**dict(record), generation=generation, revision=revision)
