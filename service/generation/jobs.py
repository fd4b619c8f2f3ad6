"""Generations running in the background of the service, each on a thread of its own.

``POST /v1/generations`` answers at once with a job; the job calls the model (within the
provider's limits) and stores each reply as a run. The jobs are kept in this process's memory
(lost on restart; the runs they stored are durable).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from service.context import ServiceContext
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs

log = logging.getLogger("regua.generation")
KEEP_JOBS = 200
JOB_URL = "/v1/generations/{}"
JobState = Literal["running", "done", "failed"]


class GenerationJobView(BaseModel):
    """A generation as the API shows it: how far it got and, once done, its runs."""

    job_id: str
    state: JobState
    task: str
    api: str
    model: str
    mock: bool
    repeats: int
    done: int
    run_ids: list[str]
    error: str | None = None
    status_url: str


@dataclass
class GenerationJob:
    """One generation: its request, its progress and its runs (in repeat order)."""

    task: str
    params: GenerationParams
    repeats: int
    token_id: int | None
    id: str = field(default_factory=lambda: f"gen_{uuid.uuid4().hex[:16]}")
    state: JobState = "running"
    done: int = 0
    run_ids: list[str] = field(default_factory=list)
    error: str | None = None

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
        )

    def progress(self, done: int, total: int) -> None:
        """``generate_runs``' progress callback."""
        del total
        self.done = done

    def run(self, ctx: ServiceContext) -> None:
        """Generate, then record the runs (or the error: the runs stored so far stay)."""
        try:
            ids = generate_runs(
                ctx,
                self.task,
                self.params,
                self.repeats,
                token_id=self.token_id,
                on_progress=self.progress,
            )
        except Exception as exc:  # recorded on the job, never raised into the server
            log.exception("generation %s failed", self.id)
            self.error, self.state = f"{type(exc).__name__}: {exc}"[:2000], "failed"
            return
        self.run_ids, self.state = ids, "done"


_JOBS: OrderedDict[str, GenerationJob] = OrderedDict()
_LOCK = threading.Lock()


def start(ctx: ServiceContext, job: GenerationJob) -> GenerationJob:
    """Run ``job`` on a daemon thread of its own and remember it."""
    with _LOCK:
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
