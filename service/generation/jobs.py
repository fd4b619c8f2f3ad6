"""Generations running in the background of the service, each on a thread of its own.

``POST /v1/generations`` answers at once with a job; the job calls the model (within the
provider's limits) and stores each reply as a run. The jobs are kept in this process's memory
(lost on restart; the runs they stored are durable).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field

from regua.errors import BatchTooLargeError, QueueShareError
from regua.views.jobs import ChainView, GenerationJobView, JobState
from service.context import ServiceContext
from service.generation.request import GenerationParams
from service.generation.revise import ReviseOptions, generate_and_revise
from service.generation.runner import generate_runs

log = logging.getLogger("regua.generation")
KEEP_JOBS = 200
JOB_URL = "/v1/generations/{}"
MAX_JOBS_PER_TOKEN = 4
"""Running generation jobs (each a thread) one token may have at once."""
MAX_CALLS_PER_TOKEN = 200
"""Model calls not made yet, over a token's running jobs (repeats times rounds)."""
RETRY_AFTER_S = 30
WAIT_MAX_S = 300.0
"""The longest a ``wait`` request is answered after (then 202: the job goes on, poll it)."""


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
        )

    def calls_left(self) -> int:
        """Model calls this job has still to make (first answers and revision rounds)."""
        rounds = 1 + (self.revise.rounds if self.revise else 0)
        return max(0, self.repeats * rounds - self.done - self.rounds_done)

    def progress(self, done: int, total: int) -> None:
        """``generate_runs``' progress callback."""
        del total
        self.done = done

    def round_done(self) -> None:
        """The revision rounds' progress callback."""
        self.rounds_done += 1

    def run(self, ctx: ServiceContext) -> None:
        """Generate, then record the runs (or the error: the runs stored so far stay)."""
        try:
            ids = self._generate(ctx)
        except Exception as exc:  # recorded on the job, never raised into the server
            log.exception("generation %s failed", self.id)
            self.error, self.state = f"{type(exc).__name__}: {exc}"[:2000], "failed"
            return
        self.run_ids, self.state = ids, "done"

    def _generate(self, ctx: ServiceContext) -> list[str]:
        """The first answers' run ids (and, with ``revise``, every chain on the job)."""
        if self.revise is None:
            return generate_runs(
                ctx,
                self.task,
                self.params,
                self.repeats,
                token_id=self.token_id,
                on_progress=self.progress,
            )
        chains = generate_and_revise(
            ctx,
            self.task,
            self.params,
            self.repeats,
            self.revise,
            token_id=self.token_id,
            on_progress=self.progress,
            on_round=self.round_done,
        )
        self.chains = [ChainView(run_ids=c.run_ids, stopped=c.stopped) for c in chains]
        return [c.first_run_id for c in chains]


_JOBS: OrderedDict[str, GenerationJob] = OrderedDict()
_LOCK = threading.Lock()


def _admit(job: GenerationJob) -> None:
    """Refuse a job over its token's share (429 with ``Retry-After``, or 422 if it never fits).

    Called under ``_LOCK``; jobs without a token (the service's own) are not counted.
    """
    wanted = job.calls_left()
    if wanted > MAX_CALLS_PER_TOKEN:
        raise BatchTooLargeError(
            f"{wanted} model calls (repeats x rounds) in one generation; at most "
            f"{MAX_CALLS_PER_TOKEN} per token at a time: split it"
        )
    if job.token_id is None:
        return
    mine = [j for j in _JOBS.values() if j.state == "running" and j.token_id == job.token_id]
    pending = sum(j.calls_left() for j in mine)
    if len(mine) >= MAX_JOBS_PER_TOKEN or pending + wanted > MAX_CALLS_PER_TOKEN:
        raise QueueShareError(
            f"this token has {len(mine)} generation(s) running with {pending} model call(s) "
            f"left (at most {MAX_JOBS_PER_TOKEN} generations and {MAX_CALLS_PER_TOKEN} calls); "
            "retry when they finish",
            RETRY_AFTER_S,
        )


def start(ctx: ServiceContext, job: GenerationJob) -> GenerationJob:
    """Run ``job`` on a daemon thread of its own and remember it (refused over its share)."""
    with _LOCK:
        _admit(job)
        _JOBS[job.id] = job
        finished = [k for k, j in _JOBS.items() if j.state != "running"]
        for key in finished[: max(0, len(finished) - KEEP_JOBS)]:
            del _JOBS[key]
    threading.Thread(target=job.run, args=(ctx,), name=f"regua-{job.id}", daemon=True).start()
    return job


def find(job_id: str) -> GenerationJob | None:
    """A job of this process by id (None when unknown or forgotten)."""
    with _LOCK:
        return _JOBS.get(job_id)


async def wait_for(job: GenerationJob, limit_s: float = WAIT_MAX_S) -> bool:
    """Wait on the event loop (no server thread held) until ``job`` ends; False past ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while job.state == "running":
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def running(token_id: int | None = None) -> int:
    """How many generation jobs are running (of ``token_id`` when given)."""
    with _LOCK:
        jobs = [j for j in _JOBS.values() if j.state == "running"]
    return sum(1 for j in jobs if token_id is None or j.token_id == token_id)
