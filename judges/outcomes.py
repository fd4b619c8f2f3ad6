"""What the jury and the panel produce: votes, criterion outcomes, run outcomes and records.

Everything here is immutable and JSON-serialisable through ``to_dict()``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, get_args

from judges.adjudication_record import Adjudication
from judges.rubric_score import RubricScore
from judges.verdicts import JudgeFailure, Verdict, VerdictStatus
from regua.outcomes import CriterionStatus as CriterionStatus
from regua.outcomes import OutcomeStatus as OutcomeStatus
from regua.records import field_dict, fields_of

CRITERION_STATUSES: dict[str, CriterionStatus] = {s: s for s in get_args(CriterionStatus)}
"""Each criterion status by name (narrows stored text to :data:`CriterionStatus`)."""


def _with_set(out: Mapping[str, Any], **optional: object) -> dict[str, Any]:
    """``out`` and, after it, each optional value that is set (a ``None`` is left out)."""
    return {**out, **{k: v for k, v in optional.items() if v is not None}}


@dataclass(frozen=True)
class Vote:
    """A verdict as counted by the jury: eligible or kept for inspection only.

    ``note`` says why a verdict did not count although its judge may vote on the criterion
    (a non-recognising judge's ``pass`` on a criterion that asks for something recognisable).
    """

    judge_profile_id: str
    status: VerdictStatus
    eligible: bool
    note: str | None = None
    level: int | None = None
    """The level of a graded verdict (None: a pass/fail verdict, or no level given)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``note`` and ``level`` only when set)."""
        out = {
            "judge_profile_id": self.judge_profile_id,
            "status": self.status.value,
            "eligible": self.eligible,
        }
        return _with_set(out, note=self.note, level=self.level)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vote:
        """Inverse of :meth:`to_dict`."""
        note = data.get("note")
        level = data.get("level")
        return cls(
            str(data["judge_profile_id"]),
            VerdictStatus(data["status"]),
            bool(data["eligible"]),
            str(note) if note is not None else None,
            None if level is None else int(level),
        )


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
    level: int | None = None
    """The decided level of a graded criterion (None: pass/fail, or no level decided)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``level`` only on a graded criterion with a decided level)."""
        out = {
            **field_dict(self, "criterion", "kind", "status", "review_required", "review_reason"),
            "votes": [v.to_dict() for v in self.votes],
            **field_dict(self, "disagreement", "cause"),
        }
        return _with_set(out, level=self.level)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CriterionOutcome:
        """Inverse of :meth:`to_dict`."""
        status = str(data["status"])
        if status not in CRITERION_STATUSES:
            raise ValueError(f"unknown criterion status {status!r}")
        return cls(
            criterion=str(data["criterion"]),
            kind=str(data["kind"]),
            status=CRITERION_STATUSES[status],
            review_required=bool(data.get("review_required")),
            review_reason=data.get("review_reason"),
            votes=tuple(Vote.from_dict(v) for v in data.get("votes") or ()),
            disagreement=data.get("disagreement"),
            cause=data.get("cause"),
            level=None if data.get("level") is None else int(data["level"]),
        )


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
class JudgeAnswers:
    """What the panel's judges answered on one run: verdicts and failures, before the jury."""

    verdicts: tuple[Verdict, ...] = ()
    failures: tuple[JudgeFailure, ...] = ()
    adjudications: tuple[Adjudication, ...] = ()
    """Adjudications already made on this run (reused, never asked again, when answers are)."""


@dataclass(frozen=True)
class SeatedJudge:
    """A panel member as it votes: the profile the panel names and the identity it votes under.

    A profile that leaves its model open gets it from settings and votes (and is calibrated)
    under its effective id, e.g. ``vision-llm-openai+llava@1``, with that profile's hash.
    """

    registered_id: str
    id: str
    content_hash: str
    kind: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return fields_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeatedJudge:
        """Inverse of :meth:`to_dict` (every field is text)."""
        return cls(*(str(data[f.name]) for f in fields(cls)))


@dataclass(frozen=True)
class PanelRecord:
    """The panel as recorded on an evaluation: id, assignments, hash and who sat on it."""

    id: str
    family: str
    assignments: Mapping[str, tuple[str, ...]]
    content_hash: str
    judges: tuple[SeatedJudge, ...] = ()
    adjudicator: str | None = None
    """The profile id the panel names as its adjudicator (its seat is among ``judges``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored as ``evaluations.judge_panel``; ``adjudicator`` when set)."""
        out = {
            "id": self.id,
            "family": self.family,
            "assignments": {k: list(v) for k, v in sorted(self.assignments.items())},
            "content_hash": self.content_hash,
            "judges": [j.to_dict() for j in self.judges],
        }
        return _with_set(out, adjudicator=self.adjudicator)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PanelRecord:
        """Inverse of :meth:`to_dict` (older records without ``judges`` read as none)."""
        assignments = data.get("assignments") or {}
        return cls(
            id=str(data.get("id") or ""),
            family=str(data.get("family") or ""),
            assignments={str(k): tuple(str(p) for p in v) for k, v in assignments.items()},
            content_hash=str(data.get("content_hash") or ""),
            judges=tuple(SeatedJudge.from_dict(j) for j in data.get("judges") or ()),
            adjudicator=None if data.get("adjudicator") is None else str(data["adjudicator"]),
        )


@dataclass(frozen=True)
class PanelResult:
    """What :func:`judges.evaluate` returns: raw verdicts, judge errors, jury and outcome."""

    task_ref: str
    panel: PanelRecord
    verdicts: tuple[Verdict, ...]
    failures: tuple[JudgeFailure, ...]
    criteria: tuple[CriterionOutcome, ...]
    outcome: Outcome
    adjudications: tuple[Adjudication, ...] = ()
    """Every adjudication asked on this run (decided or left to a person)."""
    rubric: RubricScore | None = None
    """The task's rubric on the decided levels (None: the task declares none)."""

    def adjudication(self, criterion_id: str) -> Adjudication | None:
        """The adjudication of one criterion, if one was asked."""
        return next((a for a in self.adjudications if a.criterion == criterion_id), None)

    def criterion(self, criterion_id: str) -> CriterionOutcome:
        """The outcome of one criterion (KeyError when absent)."""
        for c in self.criteria:
            if c.criterion == criterion_id:
                return c
        raise KeyError(criterion_id)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "task_ref": self.task_ref,
            "panel": self.panel.to_dict(),
            "verdicts": [v.to_dict() for v in self.verdicts],
            "failures": [f.to_dict() for f in self.failures],
            "criteria": [c.to_dict() for c in self.criteria],
            "outcome": self.outcome.to_dict(),
            "adjudications": [a.to_dict() for a in self.adjudications],
            "rubric": None if self.rubric is None else self.rubric.to_dict(),
        }
