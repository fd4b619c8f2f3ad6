"""Data types of the judges: verdicts, judge errors, inputs, profiles and panel results.

Everything here is immutable and JSON-serialisable through ``to_dict()``. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

from judges.measure_memo import MeasurementMemo
from regua.errors import ConfigurationError
from tasks import Criterion, TaskSpec


class VerdictStatus(StrEnum):
    """The four statuses a judge may give one criterion."""

    PASS = "pass"
    FAIL = "fail"
    UNCERTAIN = "uncertain"
    NOT_APPLICABLE = "not_applicable"


CriterionStatus = Literal["pass", "fail", "uncertain", "not_applicable", "incomplete"]
"""Status of a criterion after the jury: a verdict status, or ``incomplete`` when the machinery
(a judge error) prevented a decision."""

OutcomeStatus = Literal["pass", "fail", "pending", "incomplete"]


def _freeze(value: Any) -> Any:
    """Deep-freeze JSON-like data: dicts become read-only mappings, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _plain(value: Any) -> Any:
    """Turn frozen data back into plain JSON-able dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


def canonical_json(value: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces) used for content hashes."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Evidence:
    """A short, localisable piece of evidence: which artifact, at what time, what was seen."""

    artifact_ref: str | None
    time_s: float | None
    description: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "artifact_ref": self.artifact_ref,
            "time_s": self.time_s,
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        """Inverse of :meth:`to_dict`."""
        t = data.get("time_s")
        return cls(data.get("artifact_ref"), None if t is None else float(t), data["description"])


@dataclass(frozen=True)
class Verdict:
    """One judge's answer on one criterion.

    ``details`` holds the judge's measurements (e.g. gap ratios) for inspection and calibration;
    ``raw_reply`` is the provider's raw text for LLM judges (stored as an artifact by the service).
    """

    criterion: str
    status: VerdictStatus
    evidence: Evidence
    judge_profile_id: str
    latency_ms: float = 0.0
    usage: Mapping[str, Any] | None = None
    cost_usd: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    raw_reply: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", VerdictStatus(self.status))
        object.__setattr__(self, "details", _freeze(self.details))
        if self.usage is not None:
            object.__setattr__(self, "usage", _freeze(self.usage))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "criterion": self.criterion,
            "status": self.status.value,
            "evidence": self.evidence.to_dict(),
            "judge_profile_id": self.judge_profile_id,
            "latency_ms": self.latency_ms,
            "usage": _plain(self.usage),
            "cost_usd": self.cost_usd,
            "details": _plain(self.details),
            "raw_reply": self.raw_reply,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Inverse of :meth:`to_dict` (used for stored and human verdicts)."""
        return cls(
            criterion=data["criterion"],
            status=VerdictStatus(data["status"]),
            evidence=Evidence.from_dict(data["evidence"]),
            judge_profile_id=data["judge_profile_id"],
            latency_ms=float(data.get("latency_ms") or 0.0),
            usage=data.get("usage"),
            cost_usd=data.get("cost_usd"),
            details=data.get("details") or {},
            raw_reply=data.get("raw_reply"),
        )


@dataclass(frozen=True)
class JudgeFailure:
    """A judge could not produce a verdict (API down, timeout, unparseable reply, no input).

    Kept apart from ``uncertain`` (material insufficient) and from ``fail`` (the work is wrong).
    """

    criterion: str
    judge_profile_id: str
    cause: str
    detail: str
    latency_ms: float = 0.0
    raw_reply: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "criterion": self.criterion,
            "judge_profile_id": self.judge_profile_id,
            "cause": self.cause,
            "detail": self.detail,
            "latency_ms": self.latency_ms,
            "raw_reply": self.raw_reply,
        }


@dataclass(frozen=True)
class FrameImage:
    """A rendered frame (PNG bytes) at a timestamp, with the artifact it is stored as."""

    time_s: float
    png: bytes = field(repr=False)
    artifact_ref: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (without the bytes)."""
        return {"time_s": self.time_s, "artifact_ref": self.artifact_ref, "bytes": len(self.png)}


MaskKind = Literal["visible", "alone"]


def mask_kind(value: str) -> MaskKind:
    """Narrow a stored or transmitted mask kind to :data:`MaskKind` (ValueError otherwise)."""
    if value == "visible":
        return "visible"
    if value == "alone":
        return "alone"
    raise ValueError(f"unknown mask kind {value!r}; expected 'visible' or 'alone'")


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
            "time_s": self.time_s,
            "part": self.part,
            "kind": self.kind,
            "artifact_ref": self.artifact_ref,
            "bytes": len(self.png),
        }


@dataclass(frozen=True)
class JudgeInput:
    """Everything a judge may see for one criterion — and nothing about the model that drew it.

    ``checks`` is ``CheckReport.to_dict()``; ``render`` is the render result (``render.json``).
    ``measurements`` is an optional memo of mask measurements keyed by content (a cache: it
    never changes a verdict, so it takes no part in equality).
    """

    task: TaskSpec
    criterion: Criterion
    frames: tuple[FrameImage, ...] = ()
    masks: tuple[MaskImage, ...] = ()
    checks: Mapping[str, Any] = field(default_factory=dict)
    render: Mapping[str, Any] = field(default_factory=dict)
    measurements: MeasurementMemo | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "frames", tuple(sorted(self.frames, key=lambda f: f.time_s)))
        object.__setattr__(self, "masks", tuple(self.masks))


JUDGE_KINDS = ("static", "geometry", "vision-llm", "human")


@dataclass(frozen=True)
class JudgeProfile:
    """An immutable, versioned judge configuration.

    ``id`` is a readable ``NAME@VERSION``; :meth:`content_hash` covers every other field, so a
    change of kind, model, prompt (or its version), parameters or thresholds gives another hash.
    When ``expected_hash`` is set (built-ins pin it), construction fails if the content no longer
    matches — the signal to bump the version. The registry refuses two contents under one id.
    """

    id: str
    kind: str
    model: str | None = None
    prompt_template: str | None = None
    prompt_version: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    expected_hash: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        name, sep, version = self.id.partition("@")
        if not sep or not name or not version:
            raise ConfigurationError(f"judge profile id must look like NAME@VERSION: {self.id!r}")
        object.__setattr__(self, "params", _freeze(self.params))
        object.__setattr__(self, "thresholds", _freeze(self.thresholds))
        if self.expected_hash is not None and self.expected_hash != self.content_hash():
            raise ConfigurationError(
                f"judge profile {self.id} changed (hash {self.content_hash()[:16]} != pinned "
                f"{self.expected_hash[:16]}); give it a new version"
            )

    def content(self) -> dict[str, Any]:
        """The hashed content: everything that defines the judge's behaviour."""
        return {
            "kind": self.kind,
            "model": self.model,
            "prompt_template": self.prompt_template,
            "prompt_version": self.prompt_version,
            "params": _plain(self.params),
            "thresholds": _plain(self.thresholds),
        }

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of :meth:`content`."""
        return hashlib.sha256(canonical_json(self.content()).encode()).hexdigest()

    def param(self, name: str, default: Any = None) -> Any:
        """A parameter or threshold value (thresholds win), or ``default``."""
        if name in self.thresholds:
            return self.thresholds[name]
        return self.params.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, with the content hash."""
        return {"id": self.id, **self.content(), "content_hash": self.content_hash()}


@dataclass(frozen=True)
class Vote:
    """A verdict as counted by the jury: eligible or kept for inspection only."""

    judge_profile_id: str
    status: VerdictStatus
    eligible: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "judge_profile_id": self.judge_profile_id,
            "status": self.status.value,
            "eligible": self.eligible,
        }


@dataclass(frozen=True)
class CriterionOutcome:
    """The jury's decision on one criterion."""

    criterion: str
    kind: str
    status: CriterionStatus
    review_required: bool = False
    review_reason: str | None = None
    votes: tuple[Vote, ...] = ()
    disagreement: str | None = None
    cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "criterion": self.criterion,
            "kind": self.kind,
            "status": self.status,
            "review_required": self.review_required,
            "review_reason": self.review_reason,
            "votes": [v.to_dict() for v in self.votes],
            "disagreement": self.disagreement,
            "cause": self.cause,
        }


@dataclass(frozen=True)
class Outcome:
    """The evaluation's overall status, with the reasons (pending) or the cause (incomplete)."""

    status: OutcomeStatus
    reasons: tuple[str, ...] = ()
    cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"status": self.status, "reasons": list(self.reasons), "cause": self.cause}


@dataclass(frozen=True)
class PanelResult:
    """What :func:`judges.evaluate` returns: raw verdicts, judge errors, jury and outcome."""

    task_ref: str
    panel: Mapping[str, Any]
    verdicts: tuple[Verdict, ...]
    failures: tuple[JudgeFailure, ...]
    criteria: tuple[CriterionOutcome, ...]
    outcome: Outcome

    def criterion(self, criterion_id: str) -> CriterionOutcome:
        """The outcome of one criterion (KeyError when absent)."""
        for c in self.criteria:
            if c.criterion == criterion_id:
                return c
        raise KeyError(criterion_id)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (what the service stores on the evaluation)."""
        return {
            "task_ref": self.task_ref,
            "panel": _plain(self.panel),
            "verdicts": [v.to_dict() for v in self.verdicts],
            "failures": [f.to_dict() for f in self.failures],
            "criteria": [c.to_dict() for c in self.criteria],
            "outcome": self.outcome.to_dict(),
        }
