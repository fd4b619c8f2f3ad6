"""Long HTTP work in the background: one job at a time, each job's state kept in memory.

:class:`JobRunner` runs jobs on one thread (created on first use) and remembers each job's state
(``running`` → ``done`` with its result, or ``failed`` with the error text). A job that raises is
recorded and logged; it never reaches the server. The registry lives in memory: it is lost on
restart (what a job stored, such as a calibration run or a re-scoring batch, is durable).
The :class:`service.context.ServiceContext` owns one runner (``ctx.job_runner()``) and closes it:
the running job is finished, queued ones are cancelled (recorded as failed).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from regua.errors import ReguaError
from service.evaluation.batches import error_text

log = logging.getLogger("regua.jobs")

#: Finished jobs remembered (the oldest are forgotten first; running jobs never are).
KEEP_FINISHED = 500
CANCELLED = "cancelled: the service stopped before the job ran"

JobFields = dict[str, str | int | float | bool | None]
"""What a job records about itself (``info``) and what its work returns (``result``)."""
Work = Callable[[], JobFields | None]
JobState = Literal["running", "done", "failed"]


class JobView(BaseModel):
    """A background job as the API shows it (plus its info and result fields)."""

    model_config = ConfigDict(extra="allow")

    job_id: str
    kind: str
    state: JobState
    elapsed_s: float
    submitted_at: str
    error: str | None = None
    status_url: str | None = None


@dataclass
class Job:
    """One background job: what it is, its state and, once finished, its result or error."""

    id: str
    kind: str
    info: JobFields = field(default_factory=dict)
    state: JobState = "running"
    result: JobFields | None = None
    error: str | None = None
    submitted_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _t0: float = field(default_factory=time.monotonic, repr=False)
    _t1: float | None = field(default=None, repr=False)
    on_cancel: Callable[[Job], None] | None = field(default=None, repr=False)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the job was accepted (until it finished, once it has)."""
        return (self._t1 if self._t1 is not None else time.monotonic()) - self._t0

    def finish(self, state: JobState, result: JobFields | None, error: str | None) -> None:
        """Record the end of the job."""
        self.result, self.error, self._t1 = result, error, time.monotonic()
        self.state = state

    def view(self, status_url: str | None = None) -> JobView:
        """Its state: id, kind, state, elapsed_s, submitted_at, info, result or error."""
        return JobView.model_validate(
            {
                **self.info,
                **(self.result or {}),
                "job_id": self.id,
                "kind": self.kind,
                "state": self.state,
                "elapsed_s": round(self.elapsed_s, 3),
                "submitted_at": self.submitted_at.isoformat(),
                "error": self.error,
                "status_url": status_url,
            }
        )


class JobRunner:
    """Runs jobs one at a time on a single background thread and keeps their state."""

    def __init__(self, keep_finished: int = KEEP_FINISHED) -> None:
        """Remember at most ``keep_finished`` finished jobs."""
        self.keep_finished = keep_finished
        self._pool: ThreadPoolExecutor | None = None
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._futures: dict[str, Future[None]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def submit(
        self,
        kind: str,
        work: Work,
        *,
        job_id: str | None = None,
        info: JobFields | None = None,
        on_cancel: Callable[[Job], None] | None = None,
    ) -> Job:
        """Queue ``work`` and return its job, in state ``running`` from the start.

        The dict ``work`` returns becomes the job's result. ``on_cancel`` is called when the
        runner closes before the job ran (the job is then ``failed`` with :data:`CANCELLED`).
        """
        job = Job(job_id or f"job_{uuid.uuid4().hex[:16]}", kind, dict(info or {}))
        job.on_cancel = on_cancel
        with self._lock:
            if self._closed:
                raise ReguaError("the job runner is closed")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="regua-job")
            self._jobs[job.id] = job
            self._futures[job.id] = self._pool.submit(self._run, job, work)
            self._forget_old()
        return job

    def get(self, job_id: str) -> Job | None:
        """A job by id (``None`` when unknown or forgotten)."""
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self, kind: str | None = None, limit: int = 50) -> list[Job]:
        """The newest jobs first (of one kind when given)."""
        with self._lock:
            found = [j for j in reversed(self._jobs.values()) if kind is None or j.kind == kind]
        return found[:limit]

    def close(self) -> None:
        """Finish the running job, cancel queued ones (recorded as failed), stop the thread."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            cancelled = [self._jobs[i] for i, f in self._futures.items() if f.cancelled()]
            self._futures.clear()
        for job in cancelled:
            job.finish("failed", None, CANCELLED)
            if job.on_cancel is not None:
                try:
                    job.on_cancel(job)
                except Exception:  # closing goes on; the job is already recorded as failed
                    log.exception("recording the cancellation of job %s failed", job.id)

    def _run(self, job: Job, work: Work) -> None:
        try:
            result = work()
        except Exception as exc:  # recorded, never raised into the server
            log.exception("background %s job %s failed", job.kind, job.id)
            job.finish("failed", None, error_text(exc))
        else:
            job.finish("done", result, None)
        finally:
            with self._lock:
                self._futures.pop(job.id, None)

    def _forget_old(self) -> None:
        finished = [i for i, j in self._jobs.items() if j.state != "running"]
        for job_id in finished[: max(0, len(finished) - self.keep_finished)]:
            del self._jobs[job_id]
