"""Host-side glue between the service and the sandboxed renderer.

``create_pool(settings)`` starts a :class:`sandbox.WorkerPool` serving
``render.worker:create_handler``; ``render_artifact(svg_text, task, pool)`` runs one render job
and returns a :class:`RenderOutput` whose ``result`` is the ``render.json`` document (the
renderer's result plus ``sandbox``, ``status``, ``cause`` and, per frame and mask, ``path``).

Status: ``ok`` (frames present) or ``incomplete`` (machinery: the pool's cause such as
``timeout`` / ``crash`` / ``oom``, or the renderer's own ``render_timeout`` / ``render_crash`` /
``render_error``).
An artifact that breaks a declared rule is failed by the static checks, not here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regua.settings import Settings
from sandbox import SandboxLimits, WorkerPool
from tasks import TaskSpec

RENDERER_VERSION = "render@1"
HANDLER = "render.worker:create_handler"
DEADLINE_MARGIN_S = 5.0


@dataclass
class RenderOutput:
    """What one sandboxed render produced."""

    status: str  # "ok" | "incomplete"
    result: dict[str, Any] | None  # the render.json document
    files: dict[str, bytes] = field(default_factory=dict)
    cause: str | None = None
    detail: str = ""
    attempts: int = 1
    elapsed_ms: float | None = None
    sandbox: dict[str, Any] | None = None

    @property
    def frames(self) -> list[tuple[float, str, bytes]]:
        """``(time_s, name, png)`` for every frame, in time order."""
        entries = (self.result or {}).get("frames") or []
        return [(float(f["time_s"]), f["name"], self.files[f["name"]]) for f in entries]

    @property
    def masks(self) -> list[tuple[float, str, str, str, bytes]]:
        """``(time_s, part, kind, name, png)`` for every mask."""
        entries = (self.result or {}).get("masks") or []
        return [
            (float(m["time_s"]), m["part"], m["kind"], m["name"], self.files[m["name"]])
            for m in entries
        ]

    def write(self, out_dir: Path) -> Path:
        """Write every file and ``render.json`` into ``out_dir``; returns the JSON's path."""
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            if os.path.basename(name) != name or name in ("render.json", ".", ".."):
                raise ValueError(f"refusing to write unsafe file name {name!r}")
            (out_dir / name).write_bytes(data)
        path = out_dir / "render.json"
        path.write_text(json.dumps(self.result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return path


def handler_config(settings: Settings, *, self_test: bool = True) -> dict[str, Any]:
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


build_render_pool = create_pool


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
    job: dict[str, Any] = {
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
        document: dict[str, Any] = {
            "status": "incomplete",
            "cause": outcome.cause,
            "detail": outcome.detail,
            "task_ref": task.ref,
            "render_profile_id": task.render.id,
            "frames": [],
            "masks": [],
            "blocked_requests": [],
            "sandbox": sandbox,
        }
        return RenderOutput(
            "incomplete",
            document,
            {},
            outcome.cause,
            outcome.detail,
            outcome.attempts,
            outcome.elapsed_ms,
            sandbox,
        )
    document = dict(outcome.result)
    document["sandbox"] = sandbox
    for entry in [*document.get("frames", []), *document.get("masks", [])]:
        entry["path"] = entry["name"]
    inner = str(document.get("status", "ok"))
    status, cause, detail = "ok", None, ""
    if inner != "ok" or not document.get("frames"):
        status = "incomplete"
        cause = {"timeout": "render_timeout", "crash": "render_crash"}.get(inner, "render_error")
        errors = document.get("errors") or []
        detail = "; ".join(str(e.get("detail", "")) for e in errors)[:2000]
    document["render_status"] = inner
    document["status"], document["cause"], document["detail"] = status, cause, detail
    return RenderOutput(
        status,
        document,
        dict(outcome.files),
        cause,
        detail,
        outcome.attempts,
        outcome.elapsed_ms,
        sandbox,
    )
