"""Long HTTP work in the background: one job at a time, each job's state kept in memory.

:class:`JobRunner` runs jobs on one thread (created on first use) and remembers each job's state
(``running`` → ``done`` with its result, or ``failed`` with the error text). A job that raises is
recorded and logged; it never reaches the server. The registry lives in memory: it is lost on
restart (what a job stored, such as a calibration run or a re-scoring batch, is durable).
The :class:`service.context.ServiceContext` owns one runner (``ctx.job_runner()``) and closes it:
queued jobs are cancelled and the running one gets a few seconds to finish (then it is recorded as
interrupted), so stopping the service never waits for a long job.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from regua.errors import ReguaError
from regua.views.jobs import JobState, JobView
from service.evaluation.batches import error_text

log = logging.getLogger("regua.jobs")

#: Finished jobs remembered (the oldest are forgotten first; running jobs never are).
KEEP_FINISHED = 500
CANCELLED = "cancelled: the service stopped before the job ran"
INTERRUPTED = "interrupted: the service stopped while the job ran"

JobFields = dict[str, str | int | float | bool | None]
"""What a job records about itself (``info``) and what its work returns (``result``)."""
Work = Callable[[], JobFields | None]


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
    """Runs jobs on background threads (one by default) and keeps their state."""

    def __init__(
        self, keep_finished: int = KEEP_FINISHED, threads: int = 1, name: str = "regua-job"
    ) -> None:
        """Remember at most ``keep_finished`` finished jobs; run ``threads`` jobs at once."""
        self.keep_finished = keep_finished
        self.threads, self.name = max(1, threads), name
        self._threads: list[threading.Thread] = []
        self._queue: deque[tuple[Job, Work]] = deque()
        self._current: set[str] = set()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
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
        runner closes before the job ran or while it still runs (the job is then ``failed``
        with :data:`CANCELLED` or :data:`INTERRUPTED`).
        """
        job = Job(job_id or f"job_{uuid.uuid4().hex[:16]}", kind, dict(info or {}))
        job.on_cancel = on_cancel
        with self._lock:
            if self._closed:
                raise ReguaError("the job runner is closed")
            if len(self._threads) < self.threads:
                thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._threads.append(thread)
                thread.start()
            self._jobs[job.id] = job
            self._queue.append((job, work))
            self._ready.notify()
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

    def close(self, wait_s: float = 3.0) -> None:
        """Cancel queued jobs, give the running one ``wait_s`` seconds, then stop waiting.

        Cancelled jobs are recorded as failed (:data:`CANCELLED`); a job still running after
        ``wait_s`` (over all threads) is recorded as failed (:data:`INTERRUPTED`) and left to
        the process's end (its thread is a daemon: stopping the service never waits for it).
        """
        with self._lock:
            self._closed = True
            cancelled = [job for job, _ in self._queue]
            self._queue.clear()
            self._ready.notify_all()
            threads = list(self._threads)
        for job in cancelled:
            self._cancel(job, CANCELLED)
        deadline = time.monotonic() + wait_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            current = [self._jobs[i] for i in self._current if i in self._jobs]
        for job in current:
            self._cancel(job, INTERRUPTED)

    def _cancel(self, job: Job, reason: str) -> None:
        with self._lock:
            if job.state != "running":
                return
            job.finish("failed", None, reason)
        if job.on_cancel is not None:
            try:
                job.on_cancel(job)
            except Exception:  # closing goes on; the job is already recorded as failed
                log.exception("recording the cancellation of job %s failed", job.id)

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    return
                job, work = self._queue.popleft()
                self._current.add(job.id)
            try:
                self._run(job, work)
            finally:
                with self._lock:
                    self._current.discard(job.id)

    def _run(self, job: Job, work: Work) -> None:
        state: JobState = "done"
        result: JobFields | None = None
        error: str | None = None
        try:
            result = work()
        except Exception as exc:  # recorded, never raised into the server
            log.exception("background %s job %s failed", job.kind, job.id)
            state, error = "failed", error_text(exc)
        with self._lock:
            if job.state == "running":  # not interrupted by close() meanwhile
                job.finish(state, result, error)

    def _forget_old(self) -> None:
        finished = [i for i, j in self._jobs.items() if j.state != "running"]
        for job_id in finished[: max(0, len(finished) - self.keep_finished)]:
            del self._jobs[job_id]
