"""``/v1/evaluations``: re-score stored runs with another panel, follow batches, compare (admin).

A re-scoring request answers ``202 Accepted`` with the batch to poll
(``GET /v1/evaluations/batches/{id}``, stored in ``rescore_batches``): the work runs on the
context's job runner, one job at a time. ``"wait": true`` runs it inside the request and answers
201 with the finished batch. The request is checked before it is accepted.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from regua.errors import ReguaError
from service.access.pools import check_task_access
from service.api.deps import Admin, Ctx
from service.api.started import started_or_done
from service.api.text import Text
from service.context import ServiceContext
from service.evaluation.batches import (
    BatchView,
    batch_view,
    fail_batch,
    list_batches,
    new_batch_id,
    open_batch,
)
from service.evaluation.diff import EvaluationDiff, diff_evaluations
from service.evaluation.rescore import RescoreOptions, RescoreResult, plan_rescore, rescore
from service.pipeline.jobs import CANCELLED, Job, JobFields
from service.pipeline.rerender import rerenderer

router = APIRouter(prefix="/v1/evaluations", tags=["evaluations"])

BATCH_URL = "/v1/evaluations/batches/{}"
WAIT_DOC = "run inside the request and answer 201 with the result (instead of 202 and a batch)"


class RescoreBody(BaseModel):
    """Re-judge stored runs of ``task`` with ``panel`` (optionally under another rubric)."""

    task: Text = Field(max_length=200)
    panel: Text = Field(max_length=200)
    runs: list[Annotated[Text, Field(max_length=200)]] | None = Field(None, max_length=100_000)
    rubric: Text | None = Field(None, max_length=200)
    note: Text | None = Field(None, max_length=10_000)
    wait: bool = Field(False, description=WAIT_DOC)


class AppendedEvaluation(BaseModel):
    """One evaluation a batch appended and the one it superseded."""

    run_id: str
    evaluation_id: int
    supersedes_id: int | None


class FinishedBatch(BatchView):
    """A finished batch with every evaluation it appended (``wait``)."""

    evaluations: list[AppendedEvaluation]


class BatchList(BaseModel):
    """The newest re-scoring batches first."""

    batches: list[BatchView]


def _run(
    ctx: ServiceContext, body: RescoreBody, caller: int, batch_id: str | None
) -> RescoreResult:
    rubric = ctx.registry.get(body.rubric) if body.rubric else None
    options = RescoreOptions(ctx.settings, caller, body.note, batch_id)
    return rescore(
        ctx.db,
        ctx.blobs,
        task_ref=body.task,
        panel_id=body.panel,
        run_ids=body.runs,
        rubric=rubric,
        rerender=rerenderer(ctx.db, ctx.blobs, ctx.machinery),
        evaluator=ctx.evaluator,
        options=options,
    )


@router.post(
    "",
    **started_or_done(
        FinishedBatch | BatchView, "with `wait`: the finished batch with every evaluation"
    ),
)
def create_evaluations(
    body: RescoreBody, ctx: Ctx, caller: Admin, response: Response
) -> FinishedBatch | BatchView:
    """Re-score stored runs from stored frames and masks; one new evaluation per run.

    The request is checked first (panel, rubric and runs exist; they fit together). Then 202
    with the batch to poll at ``status_url`` (``wait``: 201 with the finished batch).
    """
    check_task_access(ctx.db, ctx.registry, caller, [body.task])
    if body.wait:
        result = _run(ctx, body, caller.token_id, None)
        response.status_code = 201
        with ctx.db.read() as s:
            view = batch_view(s, result.batch_id)
        lines = [
            AppendedEvaluation(run_id=r, evaluation_id=e, supersedes_id=p)
            for r, e, p in result.appended
        ]
        return FinishedBatch(**view.model_dump(), evaluations=lines)
    rubric = ctx.registry.get(body.rubric) if body.rubric else None
    plan = plan_rescore(
        ctx.db, task_ref=body.task, panel_id=body.panel, run_ids=body.runs, rubric=rubric
    )  # a refused request opens no batch
    batch_id = new_batch_id()
    open_batch(
        ctx.db,
        batch_id,
        task_ref=body.task,
        panel=plan.panel,
        runs=len(plan.runs),
        requested_by=caller.token_id,
        note=body.note,
    )

    def work() -> JobFields:
        return {"appended": len(_run(ctx, body, caller.token_id, batch_id).appended)}

    def cancelled(job: Job) -> None:
        fail_batch(ctx.db, batch_id, ReguaError(CANCELLED), 0, job.elapsed_s)

    try:
        ctx.job_runner().submit("rescore", work, job_id=batch_id, on_cancel=cancelled)
    except Exception as exc:  # e.g. the service is stopping: the batch never ran
        fail_batch(ctx.db, batch_id, exc, 0, 0.0)
        raise
    url = BATCH_URL.format(batch_id)
    response.headers["Location"] = url
    with ctx.db.read() as s:
        return batch_view(s, batch_id).model_copy(update={"status_url": url})


@router.get("/batches", response_model=BatchList, response_model_exclude_none=True)
def get_batches(ctx: Ctx, _admin: Admin, limit: int = Query(50, ge=1, le=500)) -> BatchList:
    """The newest re-scoring batches first (state and progress; no per-run lists)."""
    with ctx.db.read() as s:
        found = list_batches(s, limit)
    return BatchList(
        batches=[b.model_copy(update={"status_url": BATCH_URL.format(b.batch_id)}) for b in found]
    )


@router.get("/batches/{batch_id}", response_model=BatchView, response_model_exclude_none=True)
def get_batch(batch_id: str, ctx: Ctx, _admin: Admin) -> BatchView:
    """One re-scoring batch and how far it got.

    ``state`` running|done|failed, ``runs``, ``done``, ``elapsed_s``; the summary (appended,
    rerendered, skipped, judged, memo_hits, remeasured…) when done, the ``error`` when failed.
    Compare it with ``/v1/evaluations/diff?a=previous:<id>&b=<id>``.
    """
    job = ctx.jobs.get(batch_id) if ctx.jobs is not None else None
    job_error = job.error if job is not None and job.state == "failed" else None
    with ctx.db.read() as s:
        view = batch_view(s, batch_id, job_error)
    return view.model_copy(update={"status_url": BATCH_URL.format(batch_id)})


@router.get("/diff", response_model=EvaluationDiff)
def get_evaluations_diff(
    ctx: Ctx,
    _admin: Admin,
    a: str = Query(..., description="batch id, previous:<batch id>, panel id or evaluation id"),
    b: str = Query(..., description="same forms as a"),
    task: str | None = Query(None, description="restrict panel selectors to this task version"),
) -> EvaluationDiff:
    """Per criterion: how many verdicts moved between a and b, and which runs moved."""
    with ctx.db.read() as s:
        return diff_evaluations(s, a, b, task)
