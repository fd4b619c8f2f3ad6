"""The typed render log (``render.json``): what one sandboxed render reported.

The renderer inside the sandbox returns JSON (``docs/contracts.md``, section *render*); the host
reads it into :class:`RenderLog`, adds the sandbox description and its own ``status`` / ``cause``,
and stores it as the run's ``render_log`` artifact. Fields this model does not name are kept
(``extra="allow"``), so nothing the renderer recorded is lost.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

import judges


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow")


class FrameEntry(_Entry):
    """One captured frame."""

    time_s: float
    name: str
    """File name, e.g. ``frame-500.png``."""
    sha256: str
    path: str | None = None
    """Where the file is, relative to ``render.json`` (its name)."""


class MaskEntry(_Entry):
    """One part mask at one timestamp."""

    time_s: float
    part: str
    kind: str
    """``visible`` or ``alone``."""
    name: str
    sha256: str
    pixels: int | None = None
    path: str | None = None
    """Where the file is, relative to ``render.json`` (its name)."""


class BlockedRequest(_Entry):
    """A request the drawing attempted (every one is blocked)."""

    url: str


class AnimationInfo(_Entry):
    """Whether anything animated, and how (``smil``, ``css-animation`` …)."""

    detected: bool = False
    kinds: list[str] = Field(default_factory=list)


class DocumentInfo(_Entry):
    """What the browser made of the document."""

    root: str | None = None
    root_ns: str | None = None
    elements: int | None = None
    scripts: int | None = None
    path: str | None = None
    """The timing path the renderer used to seek (``swap`` …)."""
    xml_viewer: bool = False


class Navigation(_Entry):
    """A navigation the page attempted and the renderer refused."""

    kind: str
    """``meta-refresh``, ``form-submission``, ``navigation`` or ``requested``."""
    url: str | None = None
    detail: str = ""


class RenderProblem(_Entry):
    """One error the renderer reported."""

    kind: str
    detail: str = ""


class RenderLog(_Entry):
    """``render.json``: the renderer's result plus the host's status, cause and sandbox."""

    status: Literal["ok", "incomplete", "over_budget"] = "ok"
    """``ok`` (frames present), ``over_budget`` (the drawing's render exceeded the budget: its
    cost, failed by that declared rule) or ``incomplete`` (a machinery failure, with a cause)."""
    cause: str | None = None
    detail: str = ""
    render_status: str | None = None
    """The renderer's own status (``ok`` | ``timeout`` | ``crash`` | ``error``)."""
    task_ref: str | None = None
    render_profile_id: str | None = None
    browser_version: str | None = None
    frames: list[FrameEntry] = Field(default_factory=list)
    masks: list[MaskEntry] = Field(default_factory=list)
    blocked_requests: list[BlockedRequest] = Field(default_factory=list)
    script_executed: bool = False
    animation: AnimationInfo | None = None
    document: DocumentInfo | None = None
    errors: list[RenderProblem] = Field(default_factory=list)
    navigations: list[Navigation] = Field(default_factory=list)
    """Navigations of the page the policy refused (meta refresh, form submission …)."""
    sandbox: dict[str, JsonValue] = Field(default_factory=dict)
    cpu_budget_s: float | None = None
    """The render budget: CPU seconds of the sandbox's whole process tree (the task's)."""
    cpu_ms: float | None = None
    """CPU time the render used (every process of the sandbox), the budget's measure."""
    cpu_source: str | None = None
    """Where ``cpu_ms`` was read: ``cgroup`` (cpu.stat), ``worker`` (the sandbox's process tree,
    read inside) or ``tree`` (the process tree, read by the host)."""
    wall_ms: float | None = None
    """Wall time of the render on its worker (without the wait for a free worker)."""
    wall_stop_s: float | None = None
    """The wall-clock safety stop (several times the budget); a stop there is never a verdict."""
    queue_wait_ms: float | None = None
    """Time the render waited for a free worker before it started (not part of its cost)."""
    stopped_by: str | None = None
    """``cpu`` (the budget) or ``wall`` (the safety stop) when the render was stopped."""
    attempts: list[dict[str, JsonValue]] = Field(default_factory=list)
    """Earlier attempts (cause, CPU and wall time) when the render was retried."""

    def summary(self) -> judges.RenderSummary:
        """What judges see of this log."""
        return judges.RenderSummary(
            status=self.status,
            cause=self.cause,
            detail=self.detail,
            blocked_requests=tuple(b.url for b in self.blocked_requests),
            navigations=tuple(_navigation_text(n) for n in self.navigations),
            script_executed=self.script_executed,
            animation_detected=self.animation.detected if self.animation is not None else None,
        )

    def to_json(self) -> bytes:
        """Canonical JSON bytes, as stored."""
        return self.model_dump_json(indent=1).encode("utf-8")


def _navigation_text(nav: Navigation) -> str:
    """One refused navigation in words: ``meta-refresh to about:blank``."""
    return f"{nav.kind} to {nav.url}" if nav.url else nav.kind
