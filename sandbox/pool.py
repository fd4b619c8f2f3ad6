"""A thread-safe pool of long-lived sandboxed workers.

``run()`` takes an idle worker from a queue (starting one if the slot is empty), runs the job and
gives the worker back — or retires it when it has served ``max_jobs_per_worker`` jobs, died,
timed out, or its sandbox's private RSS grew past ``max_rss_mb``. A retired worker's slot is
refilled in the background so the next job rarely pays a cold start. A job whose worker was
killed or crashed (causes in ``retry_causes``) is retried on a fresh worker up to ``retries``
times; what is left is an ``incomplete`` outcome with its cause — never a fail of the work.

A caller may ask for a ``fresh`` worker (one started for this job, never one that served before)
and for ``quiet`` (the job waits until at most ``quiet_limit`` jobs run in this pool, itself
included, and holds new jobs back while it runs): the retry of a job that the wall clock stopped
although its CPU time was under budget runs so. ``queue_wait_ms`` of an outcome is the time the
job waited for a worker; ``elapsed_ms`` the time it ran on one.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from regua.errors import SandboxError
from sandbox.backend import SandboxBackend, get_backend
from sandbox.limits import SandboxLimits
from sandbox.worker import JobOutcome, Worker, WorkerStartError

log = logging.getLogger("regua.sandbox")

DEFAULT_RETRY_CAUSES = frozenset({"crash", "oom", "protocol_error", "start_failed"})


class WorkerPool:
    """Pool of sandboxed workers serving ``handler`` (``module:function``) jobs."""

    def __init__(
        self,
        backend: SandboxBackend | str = "bubblewrap",
        handler: str = "render.worker:create_handler",
        handler_config: dict[str, Any] | None = None,
        size: int = 2,
        max_jobs_per_worker: int = 50,
        max_rss_mb: int = 1500,
        limits: SandboxLimits | None = None,
        retries: int = 2,
        *,
        warm: bool = True,
        start_timeout_s: float = 60.0,
        retry_causes: Iterable[str] = DEFAULT_RETRY_CAUSES,
        python: str | None = None,
    ) -> None:
        """Configure the pool and, with ``warm``, start its workers in the background.

        ``backend`` is a backend or its registered name; ``retries`` counts how often a job is
        retried on a fresh worker after one of ``retry_causes``.
        """
        if size < 1 or max_jobs_per_worker < 1 or retries < 0:
            raise ValueError("size and max_jobs_per_worker must be >= 1, retries >= 0")
        self.backend = get_backend(backend) if isinstance(backend, str) else backend
        self.handler = handler
        self.handler_config = dict(handler_config or {})
        self.size = size
        self.max_jobs_per_worker = max_jobs_per_worker
        self.max_rss_mb = max_rss_mb
        self.limits = limits or SandboxLimits()
        self.retries = retries
        self.start_timeout_s = start_timeout_s
        self.retry_causes = frozenset(retry_causes)
        self.python = python
        self.stats: Counter[str] = Counter()
        self.startup_ms: list[float] = []
        self.peak_rss_bytes = 0
        self._idle: queue.Queue[Worker | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._counter = 0
        self._starters: list[threading.Thread] = []
        self._gate = threading.Condition()
        self._running = 0
        self._quiet = 0
        self.quiet_limit = max(1, size // 2)
        if warm:
            self._warm_up()
        else:
            for _ in range(size):
                self._idle.put(None)

    # -- life cycle ---------------------------------------------------------------------------

    def _new_worker(self) -> Worker:
        with self._lock:
            self._counter += 1
            worker_id = f"{self.backend.name}-{self._counter}"
        worker = Worker(
            self.backend, self.handler, self.handler_config, self.limits, worker_id, self.python
        )
        worker.start(self.start_timeout_s)
        with self._lock:
            self.stats["started"] += 1
            self.startup_ms.append(worker.startup_ms)
        return worker

    def _warm_up(self) -> None:
        with ThreadPoolExecutor(max_workers=self.size) as executor:
            futures = [executor.submit(self._new_worker) for _ in range(self.size)]
        errors: list[str] = []
        for future in futures:
            try:
                self._idle.put(future.result())
            except SandboxError as exc:  # WorkerStartError, or the backend refused to spawn
                errors.append(str(exc))
                self._idle.put(None)
        if len(errors) == self.size:
            self.close()
            raise SandboxError(f"no sandboxed worker could start ({self.handler}): {errors[0]}")
        for error in errors:
            log.warning("worker failed to start during warm-up: %s", error)

    def _refill(self) -> None:
        """Start a replacement worker in the background (slot stays empty if it fails)."""

        def start() -> None:
            try:
                worker: Worker | None = self._new_worker()
            except (WorkerStartError, SandboxError) as exc:
                log.warning("replacement worker failed to start: %s", exc)
                worker = None
            if worker is not None and self._closed:
                worker.close()
                worker = None
            self._idle.put(worker)

        with self._lock:
            if self._closed:
                self._idle.put(None)
                return
            self._starters = [t for t in self._starters if t.is_alive()]
            thread = threading.Thread(target=start, name="regua-sandbox-refill", daemon=True)
            self._starters.append(thread)
        thread.start()

    def _retire(self, worker: Worker, reason: str) -> None:
        with self._lock:
            self.stats[f"retired_{reason}"] += 1
            self.peak_rss_bytes = max(self.peak_rss_bytes, worker.peak_rss_bytes)
        log.info(
            "retiring worker %s (%s) after %d jobs", worker.worker_id, reason, worker.jobs_done
        )
        threading.Thread(target=worker.close, daemon=True).start()
        self._refill()

    def _give_back(self, worker: Worker, outcome: JobOutcome) -> None:
        self.peak_rss_bytes = max(self.peak_rss_bytes, worker.peak_rss_bytes)
        if self._closed:
            worker.close()
            self._idle.put(None)
        elif not worker.alive:
            self._retire(worker, outcome.cause or "died")
        elif worker.jobs_done >= self.max_jobs_per_worker:
            self._retire(worker, "max_jobs")
        elif worker.over_memory(self.max_rss_mb * 1024 * 1024):
            self._retire(worker, "memory")
        else:
            self._idle.put(worker)

    # -- jobs ---------------------------------------------------------------------------------

    def _take_worker(self, fresh: bool) -> Worker | JobOutcome:
        """An idle worker (a new one when ``fresh`` or when the slot is empty), or why none."""
        worker = self._idle.get()
        if fresh and worker is not None:
            self._retire_now(worker)
            worker = None
        if worker is not None:
            return worker
        if self._closed:
            self._idle.put(None)
            return JobOutcome("incomplete", cause="pool_closed", detail="pool is closed")
        try:
            return self._new_worker()
        except WorkerStartError as exc:
            self._idle.put(None)
            return JobOutcome("incomplete", cause=exc.cause, detail=exc.detail)
        except SandboxError as exc:  # e.g. the backend became unavailable
            self._idle.put(None)
            return JobOutcome("incomplete", cause="start_failed", detail=str(exc))

    def _retire_now(self, worker: Worker) -> None:
        with self._lock:
            self.stats["retired_fresh"] += 1
        threading.Thread(target=worker.close, daemon=True).start()

    def _enter(self, quiet: bool) -> None:
        """Wait for this job's turn: behind a quiet job, or (quiet) until the pool is quiet."""
        with self._gate:
            if quiet:
                self._quiet += 1
                self._gate.wait_for(lambda: self._running < self.quiet_limit)
            else:
                self._gate.wait_for(
                    lambda: self._quiet == 0 or self._running < self.quiet_limit - 1
                )
            self._running += 1

    def _leave(self, quiet: bool) -> None:
        with self._gate:
            self._running -= 1
            if quiet:
                self._quiet -= 1
            self._gate.notify_all()

    def _attempt(
        self,
        job: dict[str, Any],
        timeout_s: float,
        cpu_budget_s: float | None = None,
        *,
        fresh: bool = False,
        quiet: bool = False,
    ) -> JobOutcome:
        asked = time.monotonic()
        self._enter(quiet)
        try:
            taken = self._take_worker(fresh)
            wait_ms = round((time.monotonic() - asked) * 1000, 1)
            if isinstance(taken, JobOutcome):
                taken.queue_wait_ms = wait_ms
                return taken
            worker = taken
            try:
                outcome = worker.run(job, timeout_s, cpu_budget_s)
            except BaseException:
                worker.kill()
                self._give_back(worker, JobOutcome("incomplete", cause="crash"))
                raise
            self._give_back(worker, outcome)
            outcome.queue_wait_ms = wait_ms
            return outcome
        finally:
            self._leave(quiet)

    def run(
        self,
        job: dict[str, Any],
        timeout_s: float | None = None,
        *,
        cpu_budget_s: float | None = None,
        fresh: bool = False,
        quiet: bool = False,
    ) -> JobOutcome:
        """Run ``job`` on some worker; thread-safe. Never raises for sandbox trouble.

        ``timeout_s`` is the job's hard wall-clock stop (default: the limits'), ``cpu_budget_s``
        its CPU budget (the host's last-resort stop, see :meth:`Worker.run`); ``fresh`` and
        ``quiet`` as in the module docstring.
        """
        if self._closed:
            return JobOutcome("incomplete", cause="pool_closed", detail="pool is closed")
        timeout = timeout_s if timeout_s is not None else self.limits.wall_timeout_s
        history: list[dict[str, Any]] = []
        waited = 0.0
        for attempt in range(1, self.retries + 2):
            outcome = self._attempt(job, timeout, cpu_budget_s, fresh=fresh, quiet=quiet)
            waited += outcome.queue_wait_ms
            with self._lock:
                self.stats["jobs_ok" if outcome.ok else f"incomplete_{outcome.cause}"] += 1
            outcome.attempts = attempt
            outcome.history = history
            if outcome.ok or outcome.cause not in self.retry_causes or attempt > self.retries:
                break
            log.warning(
                "job attempt %d incomplete (%s); retrying on a fresh worker", attempt, outcome.cause
            )
            history.append(
                {
                    "attempt": attempt,
                    "cause": outcome.cause,
                    "detail": outcome.detail[:500],
                    "worker_id": outcome.worker_id,
                    "elapsed_ms": outcome.elapsed_ms,
                }
            )
        outcome.queue_wait_ms = round(waited, 1)
        if not outcome.sandbox:  # no worker ran it: nothing was measured
            outcome.sandbox = {**self.backend.describe(), "measured": False}
        return outcome

    def idle_sandbox_pids(self) -> list[int]:
        """Host pids of the idle workers' sandboxes (their outermost process), for diagnostics."""
        with self._idle.mutex:
            workers = [w for w in self._idle.queue if w is not None]
        return [w.pid for w in workers if w.pid is not None]

    def close(self) -> None:
        """Stop every worker; later ``run()`` calls return ``incomplete`` (``pool_closed``)."""
        with self._lock:
            self._closed = True
            starters = list(self._starters)
        for thread in starters:
            thread.join(timeout=self.start_timeout_s)
        closing = []
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            if worker is not None:
                closing.append(threading.Thread(target=worker.close, args=(2.0,)))
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        for _ in range(self.size):
            self._idle.put(None)

    def __enter__(self) -> WorkerPool:
        """Use the pool as a context manager that closes it on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the pool and its workers."""
        self.close()
