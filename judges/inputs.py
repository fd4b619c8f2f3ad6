"""What judges may see of one piece of work: frames, masks, the checks and the render log.

Everything here is immutable and pure. :class:`EvalInput` is the whole evidence of one run (the
one input of :func:`judges.evaluate`); :class:`JudgeInput` is the part one judge sees for one
criterion. Neither carries the model's name, position in a ranking or claims; the run's
provider sits on :class:`EvalInput` only to keep a same-provider judge off the panel, and never
reaches a judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from judges.measure_memo import MeasurementMemo
from regua.records import field_dict
from tasks import Criterion, TaskSpec

CheckStatus = Literal["pass", "fail", "not_applicable"]
RenderStatus = Literal["ok", "incomplete", "over_budget", "skipped"]
MaskKind = Literal["visible", "alone"]


def mask_kind(value: str) -> MaskKind:
    """Narrow a stored or transmitted mask kind to :data:`MaskKind` (ValueError otherwise)."""
    if value == "visible":
        return "visible"
    if value == "alone":
        return "alone"
    raise ValueError(f"unknown mask kind {value!r}; expected 'visible' or 'alone'")


def _check_status(value: object) -> CheckStatus:
    if value == "pass":
        return "pass"
    if value == "fail":
        return "fail"
    return "not_applicable"


def _render_status(value: object) -> RenderStatus:
    if value == "ok":
        return "ok"
    if value == "incomplete":
        return "incomplete"
    if value == "over_budget":
        return "over_budget"
    return "skipped"


@dataclass(frozen=True)
class FrameImage:
    """A rendered frame (PNG bytes) at a timestamp, with the artifact it is stored as."""

    time_s: float
    png: bytes = field(repr=False)
    artifact_ref: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (without the bytes)."""
        return {"time_s": self.time_s, "artifact_ref": self.artifact_ref, "bytes": len(self.png)}


@dataclass(frozen=True)
class MaskImage:
    """An 8-bit greyscale part mask (255 = the part paints that pixel) at a timestamp.

    ``kind`` is ``visible`` (what shows in the full drawing) or ``alone`` (the part on its own).
    """

    time_s: float
    part: str
    kind: MaskKind
    png: bytes = field(repr=False)
    artifact_ref: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (without the bytes)."""
        return {
            **field_dict(self, "time_s", "part", "kind", "artifact_ref"),
            "bytes": len(self.png),
        }


@dataclass(frozen=True)
class CheckEvidence:
    """Where a static check saw something: a message plus line, element path and snippet."""

    message: str
    line: int | None = None
    path: str | None = None
    snippet: str | None = None


@dataclass(frozen=True)
class CheckFinding:
    """One static check's result, as judges see it."""

    check_id: str
    """The check's id (``script``, ``size``, ``parse`` …)."""
    status: CheckStatus
    evidence: tuple[CheckEvidence, ...] = ()


@dataclass(frozen=True)
class CheckSummary:
    """The static checks of one reply: the extraction's result and every check's finding."""

    status: Literal["pass", "fail"]
    """``fail`` when extraction found no SVG or any check failed (a declared rule broke)."""
    svg_found: bool
    """False when extraction found no SVG document in the reply."""
    results: tuple[CheckFinding, ...] = ()

    @property
    def failed(self) -> tuple[CheckFinding, ...]:
        """The checks that failed, in report order."""
        return tuple(r for r in self.results if r.status == "fail")

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> CheckSummary:
        """Read a stored check report (``checks.CheckReport.to_dict()``)."""
        extraction = doc.get("extraction")
        svg_found = not (isinstance(extraction, Mapping) and extraction.get("status") == "no_svg")
        items = doc.get("checks")
        if not isinstance(items, list | tuple):
            items = doc.get("results") or ()
        results = tuple(_finding(r) for r in items if isinstance(r, Mapping))
        failed = (
            not svg_found or doc.get("status") == "fail" or any(r.status == "fail" for r in results)
        )
        return cls("fail" if failed else "pass", svg_found, results)


def _finding(doc: Mapping[str, Any]) -> CheckFinding:
    evidence = tuple(
        CheckEvidence(
            str(e.get("message") or ""),
            e.get("line") if isinstance(e.get("line"), int) else None,
            e.get("path") if isinstance(e.get("path"), str) else None,
            e.get("snippet") if isinstance(e.get("snippet"), str) else None,
        )
        for e in doc.get("evidence") or ()
        if isinstance(e, Mapping)
    )
    return CheckFinding(str(doc.get("id")), _check_status(doc.get("status")), evidence)


@dataclass(frozen=True)
class RenderSummary:
    """What the sandboxed render reported: whether it finished, and what the drawing tried."""

    status: RenderStatus = "skipped"
    """Whether the render produced frames: ``ok``, ``incomplete``, ``over_budget`` or ``skipped``.

    ``ok``: frames present; ``incomplete``: the machinery failed, with a cause; ``over_budget``:
    the drawing's render exceeded the render budget (wall clock, memory), a declared rule;
    ``skipped``: nothing was rendered (a declared rule had already failed the work).
    """
    cause: str | None = None
    """Why the render is incomplete or skipped (``timeout``, ``crash``, ``no SVG`` …)."""
    detail: str = ""
    blocked_requests: tuple[str, ...] = ()
    """URLs of the requests the drawing attempted (every one was blocked)."""
    navigations: tuple[str, ...] = ()
    """Navigations of the page the drawing attempted (each refused), e.g. ``meta-refresh to
    about:blank``."""
    script_executed: bool = False
    animation_detected: bool | None = None
    """Whether the renderer saw anything animate (None when it did not say)."""

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> RenderSummary:
        """Read a stored render log (``render.json``); ``None`` means nothing was rendered."""
        if not doc:
            return cls()
        blocked = tuple(
            str(b.get("url") if isinstance(b, Mapping) else b)
            for b in doc.get("blocked_requests") or ()
        )
        anim = doc.get("animation")
        detected = anim.get("detected") if isinstance(anim, Mapping) else None
        navigations = tuple(
            f"{n.get('kind')} to {n['url']}" if n.get("url") else str(n.get("kind"))
            for n in doc.get("navigations") or ()
            if isinstance(n, Mapping)
        )
        return cls(
            status=_render_status(doc.get("status") or "ok"),
            cause=str(doc["cause"]) if doc.get("cause") else None,
            detail=str(doc.get("detail") or ""),
            blocked_requests=blocked,
            navigations=navigations,
            script_executed=bool(doc.get("script_executed")),
            animation_detected=detected if isinstance(detected, bool) else None,
        )


@dataclass(frozen=True)
class JudgeInput:
    """Everything one judge may see for one criterion — and nothing about the model.

    ``measurements`` is an optional memo of mask measurements keyed by content (a cache: it never
    changes a verdict, so it takes no part in equality).
    """

    task: TaskSpec
    criterion: Criterion
    frames: tuple[FrameImage, ...] = ()
    masks: tuple[MaskImage, ...] = ()
    checks: CheckSummary | None = None
    render: RenderSummary = RenderSummary()
    measurements: MeasurementMemo | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Sort the frames by time and store frames and masks as tuples."""
        object.__setattr__(self, "frames", tuple(sorted(self.frames, key=lambda f: f.time_s)))
        object.__setattr__(self, "masks", tuple(self.masks))


@dataclass(frozen=True)
class EvalInput:
    """The whole evidence of one run: what :func:`judges.evaluate` turns into an outcome."""

    task: TaskSpec
    """The frozen task version the work answers (prompt, criteria, render plan)."""
    checks: CheckSummary | None
    """The static checks; ``None`` when they did not finish (a machinery failure)."""
    render: RenderSummary = RenderSummary()
    frames: tuple[FrameImage, ...] = ()
    masks: tuple[MaskImage, ...] = ()
    measurements: MeasurementMemo | None = field(default=None, compare=False, repr=False)
    """Mask measurements already made on these masks (a cache; filled while judging)."""
    machinery_error: str | None = None
    """Why the machinery could not produce or judge this evidence.

    For example checks that did not finish, or an evaluation that kept crashing; the outcome is
    then ``incomplete`` with this cause.
    """
    provider: str | None = field(default=None, repr=False)
    """The provider of the model that produced the work (e.g. ``openai``).

    Used ONLY to keep a judge of the same provider off a panel that says so
    (``JudgePanel.exclude_own_provider``); it is never shown to any judge (:meth:`for_criterion`
    does not pass it on, and :class:`JudgeInput` has no such field).
    """

    def __post_init__(self) -> None:
        """Sort the frames by time and store frames and masks as tuples."""
        object.__setattr__(self, "frames", tuple(sorted(self.frames, key=lambda f: f.time_s)))
        object.__setattr__(self, "masks", tuple(self.masks))

    def for_criterion(self, criterion: Criterion) -> JudgeInput:
        """What a judge sees of this run for one criterion."""
        return JudgeInput(
            self.task,
            criterion,
            self.frames,
            self.masks,
            self.checks,
            self.render,
            self.measurements,
        )

    def machinery_failure(self) -> str | None:
        """The cause when the machinery (checks, render or judging) failed, else None."""
        if self.machinery_error is not None:
            return self.machinery_error
        if self.checks is None:
            return "checks_unavailable"
        if self.render.status == "incomplete":
            return f"render_incomplete: {self.render.cause or 'unknown'}"
        return None
