"""The host side of sandboxed rendering: a pool of render workers and one render job at a time.

``create_pool(settings)`` starts a :class:`sandbox.WorkerPool` serving
``render.worker:create_handler``; ``render_artifact(svg_text, task, pool)`` runs one job and
returns a :class:`RenderOutput` whose ``log`` is the typed ``render.json``. :class:`RenderClient`
is the one render client a service instance (or a CLI command) holds: the pool starts on first
use and is shared by every thread.

The render budget is CPU time (the task's ``output.max_render_cpu_s``, every process of the
sandbox counted), never wall time, so a verdict does not depend on how busy the machine is. Wall
time is only a safety stop at ``wall_factor`` times the budget (the renderer stops itself there,
the pool kills the sandbox :data:`DEADLINE_MARGIN_S` later). Status: ``ok`` (frames present),
``over_budget`` (the render used more CPU than its budget, or passed the sandbox's memory cap,
or crashed Chromium's renderer: the drawing's cost, which fails it by the declared rule *exceeds
the render budget*, see :func:`judges.jury.broken_rules`) or ``incomplete`` (machinery: a worker
or browser that died and kept dying on retry, a sandbox that could not start, a renderer error,
or a render the wall clock stopped twice with its CPU time under budget: the first such stop is
retried once on a fresh worker at lower concurrency). Details are stripped of Chromium's command
line and logs (:func:`render.failures.public_detail`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

import judges
from judges.jury import RENDER_BUDGET_REASON
from regua.settings import Settings
from render.failures import public_detail
from sandbox import JobOutcome, SandboxLimits, WorkerPool
from service.pipeline.render_log import RenderLog
from tasks import TaskSpec

RENDERER_VERSION = "render@2"
HANDLER = "render.worker:create_handler"
DEADLINE_MARGIN_S = 5.0
DEFAULT_WALL_FACTOR = 10.0
"""Wall-clock safety stop in multiples of the CPU budget: a render on a 2-core machine at load 20-30
was measured at 5-10 times its CPU time in wall time."""
WALL_STOP = "wall_stop"
"""The cause of a render the wall clock stopped twice while its CPU time was under budget."""
RenderStatus = Literal["ok", "incomplete", "over_budget"]


@dataclass
class RenderOutput:
    """What one sandboxed render produced: the log, the files it names, and how it went."""

    status: RenderStatus
    log: RenderLog
    files: dict[str, bytes] = field(default_factory=dict)
    attempts: int = 1
    elapsed_ms: float | None = None
    """Wall time of the render on its worker (the wait for a free worker not included)."""

    @property
    def cause(self) -> str | None:
        """Why the render is incomplete (or over its budget)."""
        return self.log.cause

    @property
    def detail(self) -> str:
        """More about the cause."""
        return self.log.detail

    @property
    def sandbox(self) -> dict[str, JsonValue]:
        """How the sandbox ran the job (backend, limits)."""
        return self.log.sandbox

    @property
    def cpu_ms(self) -> float | None:
        """CPU time of the render (the budget's measure)."""
        return self.log.cpu_ms

    @property
    def queue_wait_ms(self) -> float | None:
        """How long the render waited for a free worker."""
        return self.log.queue_wait_ms

    def frames(self) -> tuple[judges.FrameImage, ...]:
        """The frames, as judges see them (addressed by their sha256)."""
        return tuple(
            judges.FrameImage(f.time_s, self.files[f.name], f.sha256) for f in self.log.frames
        )

    def masks(self) -> tuple[judges.MaskImage, ...]:
        """The part masks, as judges see them (addressed by their sha256)."""
        return tuple(
            judges.MaskImage(
                m.time_s, m.part, judges.mask_kind(m.kind), self.files[m.name], m.sha256
            )
            for m in self.log.masks
            if m.name in self.files
        )

    def write(self, out_dir: Path) -> Path:
        """Write every file and ``render.json`` into ``out_dir``; returns the JSON's path."""
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            if os.path.basename(name) != name or name in ("render.json", ".", ".."):
                raise ValueError(f"refusing to write unsafe file name {name!r}")
            (out_dir / name).write_bytes(data)
        path = out_dir / "render.json"
        path.write_bytes(self.log.to_json() + b"\n")
        return path


def handler_config(settings: Settings, *, self_test: bool = True) -> dict[str, JsonValue]:
    """The render handler's config for these settings."""
    return {
        "chromium_path": str(settings.chromium_path),
        "chromium_no_sandbox": False,
        "self_test": self_test,
        "deadline_s": settings.job_timeout_s,
    }


def create_pool(
    settings: Settings, *, size: int | None = None, warm: bool = True, self_test: bool = True
) -> WorkerPool:
    """A pool of sandboxed render workers configured from ``settings``."""
    limits = SandboxLimits(
        memory_mb=settings.sandbox_memory_mb,
        memory_sample_s=settings.sandbox_memory_sample_s,
        cgroup=settings.sandbox_cgroup,
        wall_timeout_s=settings.job_timeout_s,
        max_output_bytes=settings.sandbox_max_output_mb * 1024 * 1024,
    )
    return WorkerPool(
        settings.sandbox_backend,
        handler=HANDLER,
        handler_config=handler_config(settings, self_test=self_test),
        size=size or settings.render_workers,
        max_jobs_per_worker=settings.worker_max_jobs,
        max_rss_mb=settings.worker_max_rss_mb,
        limits=limits,
        retries=settings.job_retries,
        warm=warm,
    )


@dataclass(frozen=True)
class _Budget:
    """One render's limits: the CPU budget and the wall-clock safety stop (seconds)."""

    cpu_s: float
    wall_stop_s: float
    memory_mb: int


def render_artifact(
    svg_text: str,
    task: TaskSpec,
    pool: WorkerPool,
    *,
    masks: bool = True,
    cpu_budget_s: float | None = None,
    wall_factor: float = DEFAULT_WALL_FACTOR,
    timeout_s: float | None = None,
    content_type: str | None = None,
    mask_path: str | None = None,
) -> RenderOutput:
    """Render ``svg_text`` for ``task`` in the sandbox; never raises for machinery trouble.

    ``cpu_budget_s`` overrides the task's budget and ``timeout_s`` the wall-clock safety stop
    (default ``wall_factor`` times the budget); ``mask_path="reference"`` runs the mask passes
    as they were before the fast path (comparisons only).
    """
    cpu = cpu_budget_s if cpu_budget_s is not None else task.output.max_render_cpu_s
    wall = timeout_s if timeout_s is not None else cpu * wall_factor
    budget = _Budget(cpu, wall, pool.limits.memory_mb)
    job: dict[str, JsonValue] = {
        "kind": "render",
        "svg": svg_text,
        "task": task.to_wire(),
        "masks": masks,
        "cpu_budget_s": cpu,
        "deadline_s": wall,
    }
    if content_type is not None:
        job["content_type"] = content_type
    if mask_path is not None:
        job["mask_path"] = mask_path
    first = _run(pool, job, task, budget)
    if first.log.stopped_by != "wall" or first.status == "over_budget":
        return first
    # stopped by the wall clock with CPU to spare: the machine, not the drawing
    second = _run(pool, job, task, budget, retry=True)
    second.attempts += first.attempts
    second.log.attempts = [*first.log.attempts, _attempt_summary(first), *second.log.attempts]
    if second.log.stopped_by == "wall" and second.status != "over_budget":
        second.status = second.log.status = "incomplete"
        second.log.cause = WALL_STOP
        second.log.detail = (
            f"the wall clock stopped the render twice at {wall:g} s with its CPU time under the "
            f"budget of {cpu:g} s (the machine was too busy); not a verdict on the drawing"
        )
        second.files = {}
    return second


def _attempt_summary(out: RenderOutput) -> dict[str, JsonValue]:
    log = out.log
    return {
        "status": log.render_status or log.status,
        "cause": log.cause,
        "cpu_ms": log.cpu_ms,
        "wall_ms": log.wall_ms,
        "stopped_by": log.stopped_by,
    }


def _run(
    pool: WorkerPool,
    job: dict[str, JsonValue],
    task: TaskSpec,
    budget: _Budget,
    *,
    retry: bool = False,
) -> RenderOutput:
    """One pool run of ``job`` (``retry``: on a fresh worker, at lower concurrency)."""
    outcome = pool.run(
        job,
        timeout_s=budget.wall_stop_s + DEADLINE_MARGIN_S,
        cpu_budget_s=budget.cpu_s,
        fresh=retry,
        quiet=retry,
    )
    if not outcome.ok or outcome.result is None:
        log = RenderLog(
            status="incomplete",
            cause=outcome.cause,
            detail=public_detail(outcome.detail),
            task_ref=task.ref,
            render_profile_id=task.render.id,
            sandbox=dict(outcome.sandbox or {}),
        )
        _cost(log, outcome, budget, None)
        _judge_stopped(log, budget)
        return RenderOutput(log.status, log, {}, outcome.attempts, outcome.elapsed_ms)
    inner = str(outcome.result.get("status", "ok"))
    log = RenderLog.model_validate(
        {**outcome.result, "status": "ok", "render_status": inner, "sandbox": outcome.sandbox}
    )
    _cost(log, outcome, budget, outcome.result)
    for frame in log.frames:
        frame.path = frame.name
    for mask in log.masks:
        mask.path = mask.name
    files = dict(outcome.files)
    missing = [f.name for f in log.frames if f.name not in files]
    if inner != "ok" or not log.frames or missing:
        log.status = "incomplete"
        if missing:
            log.cause, log.detail = "missing_files", f"render returned no bytes for {missing}"
        else:
            log.cause = _INNER_CAUSE.get(inner, "render_error")
            log.detail = "; ".join(public_detail(e.detail) for e in log.errors)[:2000]
            _judge_stopped(log, budget)
        files = {}
    else:
        log.status, log.cause, log.detail = "ok", None, ""
    return RenderOutput(log.status, log, files, outcome.attempts, outcome.elapsed_ms)


_INNER_CAUSE = {"timeout": "render_timeout", "crash": "render_crash", "cpu_budget": "cpu_budget"}


def _cost(
    log: RenderLog, outcome: JobOutcome, budget: _Budget, result: Mapping[str, JsonValue] | None
) -> None:
    """Record the render's CPU time, wall time and queue wait, each on its own."""
    inner_cpu = result.get("cpu_ms") if result else None
    if outcome.cpu_source == "cgroup" and outcome.cpu_ms is not None:
        log.cpu_ms, log.cpu_source = outcome.cpu_ms, "cgroup"
    elif isinstance(inner_cpu, int | float):
        log.cpu_ms, log.cpu_source = float(inner_cpu), "worker"
    elif outcome.cpu_ms is not None:
        log.cpu_ms, log.cpu_source = outcome.cpu_ms, outcome.cpu_source
    log.wall_ms = outcome.elapsed_ms
    log.queue_wait_ms = outcome.queue_wait_ms
    log.cpu_budget_s, log.wall_stop_s = budget.cpu_s, budget.wall_stop_s
    stopped = result.get("stopped_by") if result else None
    if outcome.cause == "timeout":
        stopped = "wall"
    elif outcome.cause == "cpu_budget":
        stopped = "cpu"
    log.stopped_by = str(stopped) if stopped else None


def _judge_stopped(log: RenderLog, budget: _Budget) -> None:
    """Mark an unfinished render whose cause is the drawing's own cost as ``over_budget``.

    A wall-clock stop is the drawing's cost only when its CPU time had reached the budget; with
    CPU to spare it is the machine's (busy), never a verdict (:func:`render_artifact` retries).
    """
    cpu_s = (log.cpu_ms or 0.0) / 1000
    if log.stopped_by == "wall" and cpu_s < budget.cpu_s:
        return
    why = {
        "cpu": f"the render used {cpu_s:.1f} s of CPU time, over its budget of {budget.cpu_s:g} s",
        "wall": f"the render used {cpu_s:.1f} s of CPU time, over its budget of {budget.cpu_s:g} s",
        "oom": f"the sandbox's memory passed its cap of {budget.memory_mb} MB",
        "render_crash": "the drawing crashed Chromium's renderer (out of memory)",
    }
    key = log.stopped_by if log.stopped_by in ("cpu", "wall") else log.cause
    if key not in why:
        return
    if key in ("cpu", "wall"):
        log.cause = "cpu_budget"  # whichever clock stopped it, its CPU time decides
    log.status = "over_budget"
    log.detail = f"{RENDER_BUDGET_REASON}: {why[str(key)]}"


class RenderClient:
    """The render pool of one service instance or command, started on first use."""

    version = RENDERER_VERSION

    def __init__(
        self,
        settings: Settings,
        pool: WorkerPool | None = None,
        *,
        cpu_budget_s: float | None = None,
        timeout_s: float | None = None,
    ) -> None:
        """Use ``pool`` when given, else start one lazily.

        A given pool stays the caller's to close. ``cpu_budget_s`` overrides every task's render
        budget and ``timeout_s`` the wall-clock safety stop (both for tests; default: the task's
        budget, ``settings.render_wall_factor`` times it).
        """
        self._settings = settings
        self._cpu_budget_s = cpu_budget_s
        self._timeout_s = timeout_s
        self._pool = pool
        self._owns_pool = pool is None
        self._lock = threading.Lock()

    @property
    def pool(self) -> WorkerPool:
        """The worker pool (started now when it was not running)."""
        with self._lock:
            if self._pool is None:
                self._pool = create_pool(self._settings)
            return self._pool

    def render(self, svg_text: str, task: TaskSpec) -> RenderOutput:
        """Render one SVG for a task; a machinery failure comes back as ``incomplete``."""
        return render_artifact(
            svg_text,
            task,
            self.pool,
            cpu_budget_s=self._cpu_budget_s,
            wall_factor=self._settings.render_wall_factor,
            timeout_s=self._timeout_s,
        )

    def close(self) -> None:
        """Close the pool when this client started it."""
        with self._lock:
            if self._pool is not None and self._owns_pool:
                self._pool.close()
            self._pool = None
