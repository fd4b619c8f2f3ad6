"""The host side of sandboxed rendering: a pool of render workers and one render job at a time.

``create_pool(settings)`` starts a :class:`sandbox.WorkerPool` serving
``render.worker:create_handler``; ``render_artifact(svg_text, task, pool)`` runs one job and
returns a :class:`RenderOutput` whose ``log`` is the typed ``render.json``. :class:`RenderClient`
is the one render client a service instance (or a CLI command) holds: the pool starts on first
use and is shared by every thread.

Status: ``ok`` (frames present), ``over_budget`` (the drawing passed the checks but its render
ran past the job's wall clock or the sandbox's memory cap, or crashed Chromium's renderer: the
drawing's cost, which fails it by the declared rule *exceeds the render budget*, see
:func:`judges.jury.broken_rules`) or ``incomplete`` (machinery: a worker or Chromium browser that
died and kept dying on retry, a sandbox that could not start, a renderer error). Details are
stripped of Chromium's command line and logs (:func:`render.failures.public_detail`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

import judges
from judges.jury import RENDER_BUDGET_REASON
from regua.settings import Settings
from render.failures import public_detail
from sandbox import SandboxLimits, WorkerPool
from service.pipeline.render_log import RenderLog
from tasks import TaskSpec

RENDERER_VERSION = "render@1"
HANDLER = "render.worker:create_handler"
DEADLINE_MARGIN_S = 5.0
_INNER_CAUSE = {"timeout": "render_timeout", "crash": "render_crash"}
BUDGET_CAUSES = frozenset({"timeout", "oom", "render_timeout", "render_crash"})
"""Causes that are the drawing's cost, not the machinery's: the render budget was exceeded."""
RenderStatus = Literal["ok", "incomplete", "over_budget"]


@dataclass
class RenderOutput:
    """What one sandboxed render produced: the log, the files it names, and how it went."""

    status: RenderStatus
    log: RenderLog
    files: dict[str, bytes] = field(default_factory=dict)
    attempts: int = 1
    elapsed_ms: float | None = None

    @property
    def cause(self) -> str | None:
        """Why the render is incomplete."""
        return self.log.cause

    @property
    def detail(self) -> str:
        """More about the cause."""
        return self.log.detail

    @property
    def sandbox(self) -> dict[str, JsonValue]:
        """How the sandbox ran the job (backend, limits)."""
        return self.log.sandbox

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
        "deadline_s": job_deadline_s(settings.job_timeout_s),
    }


def job_deadline_s(timeout_s: float) -> float:
    """The renderer's own deadline: early enough to answer before the pool kills the worker."""
    return max(timeout_s * 0.5, timeout_s - DEADLINE_MARGIN_S)


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


def render_artifact(
    svg_text: str,
    task: TaskSpec,
    pool: WorkerPool,
    *,
    masks: bool = True,
    timeout_s: float | None = None,
    content_type: str | None = None,
) -> RenderOutput:
    """Render ``svg_text`` for ``task`` in the sandbox; never raises for machinery trouble."""
    timeout = timeout_s if timeout_s is not None else pool.limits.wall_timeout_s
    job: dict[str, JsonValue] = {
        "kind": "render",
        "svg": svg_text,
        "task": task.to_wire(),
        "masks": masks,
        "deadline_s": job_deadline_s(timeout),
    }
    if content_type is not None:
        job["content_type"] = content_type
    outcome = pool.run(job, timeout_s=timeout)
    sandbox = dict(outcome.sandbox or {})
    if not outcome.ok or outcome.result is None:
        log = RenderLog(
            status="incomplete",
            cause=outcome.cause,
            detail=public_detail(outcome.detail),
            task_ref=task.ref,
            render_profile_id=task.render.id,
            sandbox=sandbox,
        )
        _judge_budget(log, timeout, pool.limits.memory_mb)
        return RenderOutput(log.status, log, {}, outcome.attempts, outcome.elapsed_ms)
    inner = str(outcome.result.get("status", "ok"))
    log = RenderLog.model_validate(
        {**outcome.result, "status": "ok", "render_status": inner, "sandbox": sandbox}
    )
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
            _judge_budget(log, timeout, pool.limits.memory_mb)
    else:
        log.status, log.cause, log.detail = "ok", None, ""
    return RenderOutput(log.status, log, files, outcome.attempts, outcome.elapsed_ms)


def _judge_budget(log: RenderLog, timeout_s: float, memory_mb: int) -> None:
    """Mark an unfinished render whose cause is the drawing's own cost as ``over_budget``."""
    if log.cause not in BUDGET_CAUSES:
        return
    why = {
        "timeout": f"the render ran past the job's wall-clock limit of {timeout_s:g} s",
        "render_timeout": f"the render ran past its deadline of {job_deadline_s(timeout_s):g} s",
        "oom": f"the sandbox's memory passed its cap of {memory_mb} MB",
        "render_crash": "the drawing crashed Chromium's renderer (out of memory)",
    }[log.cause]
    log.status = "over_budget"
    log.detail = f"{RENDER_BUDGET_REASON}: {why}"


class RenderClient:
    """The render pool of one service instance or command, started on first use."""

    version = RENDERER_VERSION

    def __init__(
        self, settings: Settings, pool: WorkerPool | None = None, *, timeout_s: float | None = None
    ) -> None:
        """Use ``pool`` when given, else start one lazily.

        A given pool stays the caller's to close. ``timeout_s`` is the wall-clock limit per job
        (default: the pool's).
        """
        self._settings = settings
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
        return render_artifact(svg_text, task, self.pool, timeout_s=self._timeout_s)

    def close(self) -> None:
        """Close the pool when this client started it."""
        with self._lock:
            if self._pool is not None and self._owns_pool:
                self._pool.close()
            self._pool = None
