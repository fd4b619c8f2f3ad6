"""The stage machinery the pipeline calls, behind small protocols with plain-dict results.

The pipeline never touches ``checks``, ``service.rendering`` or ``judges`` directly: it calls a
:class:`Checker`, a :class:`Renderer` and an :class:`Evaluator`. Production adapters live in
:mod:`service.adapters`; tests pass fakes. Everything crossing this boundary is JSON-able dicts and
bytes, which is also what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tasks import TaskSpec


@dataclass(frozen=True)
class CheckOutput:
    """Extraction plus static checks of one raw reply."""

    status: str  # pass | fail
    report: dict[str, Any]  # CheckReport.to_dict()
    svg_text: str | None  # the extracted SVG, None when no SVG was found
    extraction: dict[str, Any]  # Extraction.to_dict()
    parsed: bool  # the SVG parsed as XML (rendering is attempted only then)


@dataclass(frozen=True)
class RenderResult:
    """What the sandboxed render returned (``incomplete`` is a machinery failure, with a cause)."""

    status: str  # ok | incomplete
    result: dict[str, Any] | None
    files: dict[str, bytes]
    cause: str | None = None
    detail: str = ""
    attempts: int = 1
    elapsed_ms: float | None = None
    sandbox: dict[str, Any] | None = None


@dataclass(frozen=True)
class FrameIn:
    """A stored frame handed to the evaluator."""

    time_s: float
    png: bytes
    artifact_ref: str


@dataclass(frozen=True)
class MaskIn:
    """A stored part mask handed to the evaluator."""

    time_s: float
    part: str
    kind: str
    png: bytes
    artifact_ref: str


@dataclass(frozen=True)
class EvalInput:
    """Everything a judge panel may see of one run: never the model's label or provider."""

    task: TaskSpec
    checks: dict[str, Any] | None
    render: dict[str, Any] | None
    render_status: str  # ok | incomplete | skipped
    render_cause: str | None
    frames: list[FrameIn] = field(default_factory=list)
    masks: list[MaskIn] = field(default_factory=list)
    #: stored measurement memo of these masks (``judges.MeasurementMemo.to_doc()``), if any
    measurements: dict[str, Any] | None = None


@dataclass(frozen=True)
class EvalOutput:
    """The panel's verdicts, judge failures, per-criterion outcomes and the run outcome."""

    outcome: dict[str, Any]  # {"status", "reasons": [...], "cause"}
    criteria: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]  # each may carry "raw": bytes (the judge's raw reply)
    failures: list[dict[str, Any]]
    panel: dict[str, Any]  # {"id": ..., "profiles": [...]}
    #: the measurement memo to store when judging added measurements to it (else None)
    measurements: dict[str, Any] | None = None


class Checker(Protocol):
    """Extraction + static checks (pure)."""

    version: str

    def check(self, raw: bytes, task: TaskSpec) -> CheckOutput:
        """Check one raw reply."""
        ...


class Renderer(Protocol):
    """Sandboxed rendering of an extracted SVG."""

    version: str

    def render(self, svg_text: str, task: TaskSpec) -> RenderResult:
        """Render frames and masks; never raises for a machinery failure (returns incomplete)."""
        ...

    def close(self) -> None:
        """Release workers."""
        ...


class Evaluator(Protocol):
    """Judges + jury + outcome."""

    panel_id: str

    def version_for(self, task: TaskSpec) -> str:
        """The panel (id and content) this evaluator would use for ``task``: the stage version."""
        ...

    def evaluate(self, inp: EvalInput) -> EvalOutput:
        """Judge every applicable criterion and decide the outcome."""
        ...


@dataclass
class Components:
    """The machinery one service instance uses."""

    checker: Checker
    renderer: Renderer
    evaluator: Evaluator

    def close(self) -> None:
        """Release what the components hold (render workers)."""
        self.renderer.close()
