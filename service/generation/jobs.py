"""Generation jobs: stored rows run by the context's generate jobs (runner or ``generate`` queue).

``POST /v1/generations`` stores the job (``generation_jobs``) and starts it with
:meth:`ServiceContext.start_generate`: embedded, on the context's generate runner (``ctx.close()``
stops it at its next model call: ``interrupted``, resumable); on PostgreSQL with procrastinate,
as a job of the ``generate`` queue that any worker runs (a job whose process died is retried by
another). Each repeat is stored under the case key ``JOB:REPEAT``, so a resumed job never calls
the model again for a repeat already stored; every call is recorded before it is sent
(:mod:`service.generation.calls`) and a call sent again after a kill is counted in the job's
``resent_calls``. Every process reads a job's state from its row.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from regua.errors import InputError
from regua.views.jobs import ChainView, GenerationJobView, JobState
from service.context import (
    GenerateArgs,
    GenerateInterruptedError,
    ServiceContext,
    register_generate_kind,
)
from service.generation.calls import resent_calls
from service.generation.request import GenerationParams
from service.generation.revise import ReviseOptions, generate_and_revise
from service.generation.runner import RunOptions, generate_runs
from service.generation.share import ADMIT_LOCK, Share
from service.pipeline.jobs import JobFields
from service.storage import GenerationJobRow, utcnow

log = logging.getLogger("regua.generation")
KIND = "generation"
JOB_URL = "/v1/generations/{}"
MAX_JOBS_PER_TOKEN = 4
"""Running generation jobs one token may have at once."""
MAX_CALLS_PER_TOKEN = 200
"""Model calls not made yet, over a token's running jobs (repeats times rounds)."""
RETRY_AFTER_S = 30
WAIT_MAX_S = 300.0
"""The longest a ``wait`` request is answered after (then 202: the job goes on, poll it)."""
WAIT_POLL_S = 0.2
SHARE = Share(
    MAX_JOBS_PER_TOKEN, MAX_CALLS_PER_TOKEN, "generation", "running", "model call", RETRY_AFTER_S
)


@dataclass
class GenerationJob:
    """One generation: its request, its progress and its runs (in repeat order)."""

    task: str
    params: GenerationParams
    repeats: int
    token_id: int | None
    revise: ReviseOptions | None = None
    id: str = field(default_factory=lambda: f"gen_{uuid.uuid4().hex[:16]}")
    state: JobState = "running"
    done: int = 0
    run_ids: list[str] = field(default_factory=list)
    error: str | None = None
    rounds_done: int = 0
    chains: list[ChainView] = field(default_factory=list)
    resent_calls: int = 0
    """Model calls sent again after the process that sent them died (same Idempotency-Key)."""

    def view(self) -> GenerationJobView:
        """Its state as the API answers it."""
        return GenerationJobView(
            job_id=self.id,
            state=self.state,
            task=self.task,
            api=self.params.api,
            model=self.params.model_label(),
            mock=self.params.is_mock,
            repeats=self.repeats,
            done=self.done,
            run_ids=list(self.run_ids),
            error=self.error,
            status_url=JOB_URL.format(self.id),
            revise=self.revise.rounds if self.revise else 0,
            rounds_done=self.rounds_done,
            chains=list(self.chains),
            resumable=self.state == "interrupted",
            resent_calls=self.resent_calls,
        )

    def calls_left(self) -> int:
        """Model calls this job has still to make (first answers and revision rounds)."""
        rounds = 1 + (self.revise.rounds if self.revise else 0)
        return max(0, self.repeats * rounds - self.done - self.rounds_done)

    def case_keys(self) -> list[str]:
        """The case key of each repeat (``JOB:REPEAT``): a resumed job skips stored ones."""
        return [f"{self.id}:{r}" for r in range(1, self.repeats + 1)]

    def row(self) -> GenerationJobRow:
        """A new row for this job."""
        return GenerationJobRow(
            id=self.id,
            task=self.task,
            params=self.params.model_dump(mode="json"),
            repeats=self.repeats,
            revise=self.revise.rounds if self.revise else 0,
            revise_findings=bool(self.revise and self.revise.findings),
            token_id=self.token_id,
            state=self.state,
            done=0,
            rounds_done=0,
            run_ids=[],
            chains=[],
        )

    @classmethod
    def of(cls, row: GenerationJobRow) -> GenerationJob:
        """The job a stored row describes."""
        revise = ReviseOptions(row.revise, findings=row.revise_findings) if row.revise else None
        state: JobState = "running"
        if row.state in ("done", "failed", "interrupted"):
            state = "done" if row.state == "done" else "failed"
            state = "interrupted" if row.state == "interrupted" else state
        return cls(
            row.task,
            GenerationParams.model_validate(row.params),
            row.repeats,
            row.token_id,
            revise,
            id=row.id,
            state=state,
            done=row.done,
            run_ids=list(row.run_ids),
            error=row.error,
            rounds_done=row.rounds_done,
            chains=[ChainView.model_validate(c) for c in row.chains],
        )


def _set(ctx: ServiceContext, job_id: str, **values: object) -> None:
    with ctx.db.write() as s:
        s.execute(
            update(GenerationJobRow)
            .where(GenerationJobRow.id == job_id)
            .values(**values, updated_at=utcnow())
        )


def load(ctx: ServiceContext, job_id: str) -> GenerationJob | None:
    """A stored job by id (None when unknown)."""
    with ctx.db.read() as s:
        row = s.get(GenerationJobRow, job_id)
        if row is None:
            return None
        job = GenerationJob.of(row)
        job.resent_calls = resent_calls(s, job_id)
        return job


def _run(ctx: ServiceContext, args: GenerateArgs, stop: threading.Event) -> JobFields | None:
    """Run (or resume) the stored job ``args['job_id']``; its row records how it ended."""
    job = load(ctx, str(args["job_id"]))
    if job is None or job.state == "done":
        return None
    _set(ctx, job.id, state="running", error=None)
    done: list[int] = [0, 0]

    def progress(count: int, total: int) -> None:
        del total
        done[0] = count
        _set(ctx, job.id, done=count)

    def round_done() -> None:
        done[1] += 1
        _set(ctx, job.id, rounds_done=done[1])

    run: RunOptions = {
        "token_id": job.token_id,
        "case_keys": job.case_keys(),
        "on_progress": progress,
        "stop": stop,
        "job": job.id,
    }
    try:
        if job.revise is None:
            ids = generate_runs(ctx, job.task, job.params, job.repeats, **run)
            chains: list[ChainView] = []
        else:
            found = generate_and_revise(
                ctx, job.task, job.params, job.repeats, job.revise, on_round=round_done, **run
            )
            chains = [ChainView(run_ids=c.run_ids, stopped=c.stopped) for c in found]
            ids = [c.first_run_id for c in found]
    except GenerateInterruptedError as exc:
        _set(ctx, job.id, state="interrupted", error=str(exc))
        return {"job_id": job.id, "state": "interrupted"}
    except Exception as exc:  # recorded on the job, never raised into the server
        log.exception("generation %s failed", job.id)
        _set(ctx, job.id, state="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return {"job_id": job.id, "state": "failed"}
    chain_rows = [c.model_dump(mode="json") for c in chains]
    _set(ctx, job.id, state="done", run_ids=ids, chains=chain_rows, done=job.repeats)
    return {"job_id": job.id, "state": "done"}


def _cancelled(ctx: ServiceContext, args: GenerateArgs) -> None:
    """A job the closing runner never started (or left running) is ``interrupted``."""
    job_id = str(args["job_id"])
    with ctx.db.write() as s:
        s.execute(
            update(GenerationJobRow)
            .where(GenerationJobRow.id == job_id, GenerationJobRow.state == "running")
            .values(state="interrupted", error="the service stopped; resume the job")
        )


register_generate_kind(KIND, _run, _cancelled)


def _admit(s: Session, job: GenerationJob) -> None:
    """Refuse a job over its token's share (429 with ``Retry-After``, or 422 if it never fits).

    Jobs without a token (the service's own) are not counted.
    """
    wanted = job.calls_left()
    SHARE.check_size(wanted, "repeats x rounds")
    if job.token_id is None:
        return
    rows = s.scalars(
        select(GenerationJobRow).where(
            GenerationJobRow.token_id == job.token_id,
            GenerationJobRow.state == "running",
            GenerationJobRow.id != job.id,
        )
    ).all()
    mine = [GenerationJob.of(r) for r in rows]
    SHARE.check_room(len(mine), sum(j.calls_left() for j in mine), wanted)


def start(ctx: ServiceContext, job: GenerationJob) -> GenerationJob:
    """Store ``job`` and start it (refused over its token's share before anything is stored)."""

    def store(s: Session) -> None:
        _admit(s, job)
        s.add(job.row())

    with ADMIT_LOCK:  # one process's admissions in turn (the row is the count)
        ctx.start_generate(KIND, {"job_id": job.id}, job.id, store=store)
    return job


def resume(ctx: ServiceContext, job: GenerationJob) -> GenerationJob:
    """Start an ``interrupted`` job again: the repeats already stored are not asked again."""
    if job.state != "interrupted":
        raise InputError(f"generation {job.id} is {job.state}: only an interrupted one resumes")

    def store(s: Session) -> None:
        _admit(s, job)
        s.execute(
            update(GenerationJobRow)
            .where(GenerationJobRow.id == job.id)
            .values(state="running", error=None, updated_at=utcnow())
        )

    with ADMIT_LOCK:
        ctx.start_generate(KIND, {"job_id": job.id}, job.id, store=store)
    job.state, job.error = "running", None
    return job


async def wait_for(
    ctx: ServiceContext, job_id: str, limit_s: float = WAIT_MAX_S
) -> GenerationJob | None:
    """Wait on the event loop (no server thread held between reads) until the job ends.

    The ended job, or None past ``limit_s``.
    """
    deadline = time.monotonic() + limit_s
    while True:
        job = await asyncio.to_thread(load, ctx, job_id)
        if job is not None and job.state != "running":
            return job
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(WAIT_POLL_S)


def running(ctx: ServiceContext, token_id: int | None = None) -> int:
    """How many generation jobs are running (of ``token_id`` when given)."""
    query = select(func.count()).where(GenerationJobRow.state == "running")
    if token_id is not None:
        query = query.where(GenerationJobRow.token_id == token_id)
    with ctx.db.read() as s:
        return int(s.scalar(query) or 0)
