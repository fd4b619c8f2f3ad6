"""A thread-safe pool of long-lived sandboxed workers.

``run()`` takes an idle worker from a queue (starting one if the slot is empty), runs the job and
gives the worker back — or retires it when it has served ``max_jobs_per_worker`` jobs, died,
timed out, or its sandbox's private RSS grew past ``max_rss_mb``. A retired worker's slot is
refilled in the background so the next job rarely pays a cold start. A job whose worker was
killed or crashed (causes in ``retry_causes``) is retried on a fresh worker up to ``retries``
times; what is left is an ``incomplete`` outcome with its cause — never a fail of the work.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
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

    def _attempt(self, job: dict[str, Any], timeout_s: float) -> JobOutcome:
        worker = self._idle.get()
        if worker is None:
            if self._closed:
                self._idle.put(None)
                return JobOutcome("incomplete", cause="pool_closed", detail="pool is closed")
            try:
                worker = self._new_worker()
            except WorkerStartError as exc:
                self._idle.put(None)
                return JobOutcome("incomplete", cause=exc.cause, detail=exc.detail)
            except SandboxError as exc:  # e.g. the backend became unavailable
                self._idle.put(None)
                return JobOutcome("incomplete", cause="start_failed", detail=str(exc))
        try:
            outcome = worker.run(job, timeout_s)
        except BaseException:
            worker.kill()
            self._give_back(worker, JobOutcome("incomplete", cause="crash"))
            raise
        self._give_back(worker, outcome)
        return outcome

    def run(self, job: dict[str, Any], timeout_s: float | None = None) -> JobOutcome:
        """Run ``job`` on some worker; thread-safe. Never raises for sandbox trouble."""
        if self._closed:
            return JobOutcome("incomplete", cause="pool_closed", detail="pool is closed")
        timeout = timeout_s if timeout_s is not None else self.limits.wall_timeout_s
        started = time.monotonic()
        history: list[dict[str, Any]] = []
        for attempt in range(1, self.retries + 2):
            outcome = self._attempt(job, timeout)
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
                }
            )
        outcome.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the pool and its workers."""
        self.close()
