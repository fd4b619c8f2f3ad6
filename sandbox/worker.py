"""One sandboxed worker seen from the host: start, hand-shake, run jobs, watch, kill."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from regua.errors import SandboxError
from regua.records import fields_of
from sandbox.backend import SandboxBackend, SandboxProcess
from sandbox.inside import sandbox_block
from sandbox.limits import SandboxLimits
from sandbox.protocol import (
    FrameReader,
    FrameTimeoutError,
    FrameTooLargeError,
    PeerClosedError,
    ProtocolError,
    encode_message,
    write_all,
)

log = logging.getLogger("regua.sandbox")

Cause = Literal[
    "timeout",
    "crash",
    "oom",
    "output_too_large",
    "handler_error",
    "protocol_error",
    "start_failed",
    "worker_refused",
    "pool_closed",
    "cpu_budget",
]

CPU_SAMPLE_S = 1.0
"""How often the host reads a job's CPU time (without a cgroup: a walk of the whole tree)."""
CPU_HARD_STOP = 1.5
"""The host kills a sandbox whose job used this many times its CPU budget (plus one second):
the worker's own watchdog stops a job at the budget, this catches one that did not stop."""


@dataclass
class JobOutcome:
    """What became of one job: ``ok`` with a result, or ``incomplete`` with its cause.

    ``incomplete`` is a failure of the evaluation machinery, never a verdict on the work.
    ``history`` lists the cause of every failed attempt before the last one. ``elapsed_ms`` is
    the wall time of the job on its worker, ``queue_wait_ms`` the time it waited for a worker
    before that (starting one included); ``cpu_ms`` is the CPU time of the worker's whole
    sandbox during the job as the host read it (``cpu_source``: ``cgroup`` or ``tree``; None
    when the job ended before the first sample).
    """

    status: Literal["ok", "incomplete"]
    result: dict[str, Any] | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    cause: str | None = None
    detail: str = ""
    attempts: int = 1
    worker_id: str | None = None
    elapsed_ms: float = 0.0
    sandbox: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    cpu_ms: float | None = None
    cpu_source: str | None = None
    queue_wait_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """``status == "ok"``."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (file contents replaced by their sizes)."""
        return {**fields_of(self), "files": {name: len(data) for name, data in self.files.items()}}


@dataclass
class _JobCpu:
    """The host's meter of one job's CPU time (started at the job or at its first sample)."""

    budget_s: float | None = None
    meter: Any = None
    source: str | None = None

    def sample(self, proc: SandboxProcess) -> None:
        if self.meter is None:
            start = getattr(proc, "cpu_meter", None)
            if start is None:
                return
            self.meter, self.source = start()
        else:
            self.meter.sample()

    def used_ms(self) -> float | None:
        return None if self.meter is None else round(self.meter.used_s() * 1000, 1)

    def over_hard_stop(self) -> bool:
        used = self.used_ms()
        if self.budget_s is None or used is None:
            return False
        return used / 1000 > self.budget_s * CPU_HARD_STOP + 1.0


class WorkerStartError(SandboxError):
    """A worker did not become ready; ``cause`` is ``start_failed`` or ``worker_refused``."""

    def __init__(self, cause: Cause, detail: str) -> None:
        """Record why (``cause``) and how (``detail``) the worker failed to start."""
        self.cause = cause
        self.detail = detail
        super().__init__(f"{cause}: {detail}")


class Worker:
    """A long-lived worker process in its own sandbox."""

    def __init__(
        self,
        backend: SandboxBackend,
        handler: str,
        handler_config: dict[str, Any],
        limits: SandboxLimits,
        worker_id: str,
        python: str | None = None,
    ) -> None:
        """Describe the worker; nothing starts until :meth:`start`."""
        self.backend = backend
        self.handler = handler
        self.handler_config = handler_config
        self.limits = limits
        self.worker_id = worker_id
        self.python = python or sys.executable
        self.jobs_done = 0
        self.startup_ms = 0.0
        self.info: dict[str, Any] = {}
        self.peak_rss_bytes = 0
        self._proc: SandboxProcess | None = None
        self._reader: FrameReader | None = None
        self._next_rss_check = 0.0
        self._over_memory = False
        self._last_memory_check = 0.0
        self._sandbox: dict[str, Any] | None = None
        self._cpu = _JobCpu()
        self._next_cpu_sample = 0.0

    @property
    def pid(self) -> int | None:
        """Host pid of the sandbox's outermost process (None before it started)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """The sandbox is running."""
        return self._proc is not None and self._proc.poll() is None

    def sandbox_info(self) -> dict[str, Any]:
        """The sandbox as the worker measured it from inside (:func:`sandbox.inside.sandbox_block`).

        Measured once, when the worker became ready (its namespaces and network do not change).
        """
        if self._sandbox is None:
            inside = self.info.get("inside")
            measured = inside if isinstance(inside, dict) else None
            self._sandbox = sandbox_block(self.backend.name, measured)
            memory_cap = getattr(self.backend, "memory_cap", None)
            if memory_cap is not None:
                self._sandbox["memory_cap"] = memory_cap(self.limits)
        return dict(self._sandbox)

    def start(self, timeout_s: float = 60.0) -> None:
        """Spawn the sandbox, send the config, wait for ``ready``."""
        started = time.monotonic()
        argv = [self.python, "-m", "sandbox.worker_main", "--handler", self.handler]
        self._proc = self.backend.spawn(argv, self.limits)
        self._reader = FrameReader(
            self._proc.stdout.fileno(), tick=self._watch_memory, tick_s=self.limits.memory_sample_s
        )
        config: dict[str, Any] = {"type": "config", "config": self.handler_config}
        config["max_output_bytes"] = self.limits.max_output_bytes
        try:
            write_all(self._proc.stdin.fileno(), encode_message(config), started + timeout_s)
            header, _ = self._reader.read_message(started + timeout_s, 1 << 20)
        except (OSError, SandboxError) as exc:
            self.kill()
            raise WorkerStartError("start_failed", self._explain(exc)) from exc
        if header.get("type") == "fatal":
            self.kill()
            detail = f"{header.get('error')}: {header.get('detail')}"
            raise WorkerStartError("worker_refused", detail)
        if header.get("type") != "ready":
            self.kill()
            raise WorkerStartError("start_failed", f"unexpected first message {header!r}")
        self.info = header
        self.startup_ms = round((time.monotonic() - started) * 1000, 1)
        log.info(
            "worker %s ready in %.0f ms (uid %s)",
            self.worker_id,
            self.startup_ms,
            header.get("uid"),
        )

    def rss_bytes(self, bound: int | None = None) -> int:
        """Private memory of the sandbox tree (0 when not running).

        The cheap upper bound is read first; only when it passes ``bound`` is the precise
        (proportional) figure computed, so the common case costs one ``/proc`` scan.
        """
        if self._proc is None or self._proc.poll() is not None:
            return 0
        rss = self._proc.tree_rss_bytes()
        if bound is not None and rss > bound:
            rss = self._proc.tree_rss_bytes(precise=True)
        self.peak_rss_bytes = max(self.peak_rss_bytes, rss)
        return rss

    def over_memory(self, bound_bytes: int, min_interval_s: float = 1.0) -> bool:
        """Whether the tree's memory passed ``bound_bytes`` (checked at most every interval)."""
        now = time.monotonic()
        if now - self._last_memory_check < min_interval_s:
            return False
        self._last_memory_check = now
        return self.rss_bytes(bound_bytes) > bound_bytes

    def _watch_memory(self) -> None:
        now = time.monotonic()
        if now < self._next_rss_check:
            return
        self._next_rss_check = now + self.limits.memory_sample_s
        bound = self.limits.memory_mb * 1024 * 1024
        if self.rss_bytes(bound) > bound:
            self._over_memory = True
            self.kill()
            return
        if now >= self._next_cpu_sample:  # the hard stop needs no finer grain (a tree walk)
            self._next_cpu_sample = now + CPU_SAMPLE_S
            self._sample_cpu()
            if self._cpu.over_hard_stop():
                self.kill()

    def _sample_cpu(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._cpu.sample(self._proc)

    def _explain(self, exc: BaseException) -> str:
        status = self._proc.poll() if self._proc is not None else None
        tail = self._proc.stderr_tail().strip()[-1500:] if self._proc is not None else ""
        where = f"worker exit status {status}" if status is not None else "worker still running"
        return f"{type(exc).__name__}: {exc} ({where}); stderr tail: {tail or '(empty)'}"

    def run(
        self, job: dict[str, Any], timeout_s: float, cpu_budget_s: float | None = None
    ) -> JobOutcome:
        """Run one job; on timeout, crash, memory or output overflow the sandbox is killed.

        With ``cpu_budget_s`` the sandbox is also killed (cause ``cpu_budget``) once the job's
        CPU time passes :data:`CPU_HARD_STOP` times the budget.
        """
        outcome = self._run(job, timeout_s, cpu_budget_s)
        outcome.cpu_ms, outcome.cpu_source = self._cpu.used_ms(), self._cpu.source
        return outcome

    def _run(self, job: dict[str, Any], timeout_s: float, cpu_budget_s: float | None) -> JobOutcome:
        assert self._proc is not None and self._reader is not None
        started = time.monotonic()
        self.jobs_done += 1
        self._over_memory = False
        self._next_rss_check = 0.0
        self._cpu = _JobCpu(cpu_budget_s)
        self._next_cpu_sample = started + CPU_SAMPLE_S / 2
        if getattr(self._proc, "cgroup", None) is not None:
            self._sample_cpu()  # exact and cheap: take the baseline now

        def incomplete(cause: Cause, detail: str) -> JobOutcome:
            return JobOutcome(
                "incomplete",
                cause=cause,
                detail=detail,
                worker_id=self.worker_id,
                elapsed_ms=round((time.monotonic() - started) * 1000, 1),
                sandbox=self.sandbox_info(),
            )

        try:
            message = encode_message({"type": "job", "id": self.jobs_done, "job": job})
            write_all(self._proc.stdin.fileno(), message, started + timeout_s)
            header, files = self._reader.read_message(
                started + timeout_s, self.limits.max_output_bytes
            )
        except FrameTimeoutError:
            self._sample_cpu()  # the CPU used up to the stop, read before the kill
            self.kill()
            return incomplete("timeout", f"job ran past its wall-clock limit of {timeout_s:g} s")
        except FrameTooLargeError as exc:
            self.kill()
            return incomplete("output_too_large", str(exc))
        except (OSError, ProtocolError) as exc:
            return incomplete(*self._why_it_died(exc))
        if header.get("type") == "error":
            outcome = incomplete("handler_error", f"{header.get('error')}: {header.get('detail')}")
            outcome.cause = str(header.get("cause") or "handler_error")
            if header.get("retire"):  # the handler cannot serve again (e.g. its browser died)
                self.kill()
            return outcome
        if header.get("type") != "result" or header.get("id") != self.jobs_done:
            self.kill()
            return incomplete("protocol_error", f"unexpected message {str(header)[:300]}")
        if getattr(self._proc, "cgroup", None) is not None:
            self._sample_cpu()
        if header.get("retire"):  # answered, but cannot serve again: replace it
            self.kill()
        return JobOutcome(
            "ok",
            result=header.get("result"),
            files=files,
            worker_id=self.worker_id,
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
            sandbox=self.sandbox_info(),
        )

    def _why_it_died(self, exc: OSError | ProtocolError) -> tuple[Cause, str]:
        """The cause and detail of a job whose worker stopped answering (the sandbox is killed)."""
        assert self._proc is not None
        # the worker closing its stdout (EOF) or its stdin (EPIPE) means it died, even if
        # bwrap has not been reaped yet; only a malformed frame is a protocol error
        crashed = isinstance(exc, (OSError, PeerClosedError)) or self._proc.poll() is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=1.0)  # let the exit status and stderr arrive
        detail = self._explain(exc)
        capped = self._over_memory or bool(getattr(self._proc, "memory_cap_hit", bool)())
        self.kill()
        if self._cpu.over_hard_stop():
            return "cpu_budget", f"job passed its CPU budget of {self._cpu.budget_s or 0.0:g} s"
        if capped:
            return "oom", f"sandbox memory passed {self.limits.memory_mb} MB and was killed"
        return ("crash" if crashed else "protocol_error"), detail

    def close(self, grace_s: float = 5.0) -> None:
        """Ask the worker to stop (stdin closed), then kill the sandbox."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=grace_s)
            except Exception:  # any trouble: fall through to the kill
                log.debug("worker %s did not stop by itself", self.worker_id)
        self.kill()

    def kill(self) -> None:
        """Kill the whole sandbox (idempotent)."""
        if self._proc is not None:
            self._proc.kill()
