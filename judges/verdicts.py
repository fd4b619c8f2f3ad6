"""What a judge answers: verdict statuses, evidence, verdicts and judge failures.

Everything here is immutable and JSON-serialisable through ``to_dict()``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from judges.frozen import freeze, plain
from regua.records import fields_of


class VerdictStatus(StrEnum):
    """The four statuses a judge may give one criterion."""

    PASS = "pass"
    FAIL = "fail"
    UNCERTAIN = "uncertain"
    NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True)
class Evidence:
    """A short, localisable piece of evidence: which artifact, at what time, what was seen."""

    artifact_ref: str | None
    time_s: float | None
    description: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return fields_of(self)

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
    level: int | None = None
    """The level given on a graded criterion (``scale: 0..5``); None on pass/fail criteria and
    when the judge could not tell (its status is then ``uncertain``)."""

    def __post_init__(self) -> None:
        """Coerce the status to :class:`VerdictStatus` and deep-freeze details and usage."""
        object.__setattr__(self, "status", VerdictStatus(self.status))
        object.__setattr__(self, "details", freeze(self.details))
        if self.usage is not None:
            object.__setattr__(self, "usage", freeze(self.usage))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``level`` only on a graded verdict)."""
        out = {
            "criterion": self.criterion,
            "status": self.status.value,
            "evidence": self.evidence.to_dict(),
            "judge_profile_id": self.judge_profile_id,
            "latency_ms": self.latency_ms,
            "usage": plain(self.usage),
            "cost_usd": self.cost_usd,
            "details": plain(self.details),
            "raw_reply": self.raw_reply,
        }
        if self.level is not None:
            out["level"] = self.level
        return out

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
            level=_level(data.get("level")),
        )


def _level(value: Any) -> int | None:
    """A stored level back as an int (None stays None)."""
    return None if value is None else int(value)


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
        return fields_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeFailure:
        """Inverse of :meth:`to_dict`."""
        return cls(
            str(data["criterion"]),
            str(data["judge_profile_id"]),
            str(data["cause"]),
            str(data.get("detail") or ""),
            float(data.get("latency_ms") or 0.0),
            data.get("raw_reply"),
        )
