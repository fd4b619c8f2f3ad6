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
    sandbox: dict[str, JsonValue] = Field(default_factory=dict)

    def summary(self) -> judges.RenderSummary:
        """What judges see of this log."""
        return judges.RenderSummary(
            status=self.status,
            cause=self.cause,
            detail=self.detail,
            blocked_requests=tuple(b.url for b in self.blocked_requests),
            script_executed=self.script_executed,
            animation_detected=self.animation.detected if self.animation is not None else None,
        )

    def to_json(self) -> bytes:
        """Canonical JSON bytes, as stored."""
        return self.model_dump_json(indent=1).encode("utf-8")
