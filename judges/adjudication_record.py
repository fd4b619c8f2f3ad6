"""What an adjudication records: why the adjudicator was asked, what it saw, what it said.

An adjudication is asked when the eligible judges of a criterion disagree (the panel's rule).
The adjudicator sees the frozen task, the criterion, the frames and the other judges' answers —
each as a status (or level) with its evidence, in a fixed order that says nothing about who gave
it: never a judge's id, provider or model. Everything is kept: the reason, the answers shown,
the prompt text, the reply and what came of it. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from judges.verdicts import JudgeFailure, Verdict
from regua.records import field_dict, fields_of

AdjudicationResult = Literal[
    "decided", "adjudicator_uncertain", "adjudicator_failed", "adjudicator_not_trusted"
]
"""What came of an adjudication: its verdict decided the criterion, or it goes to a person
because the adjudicator was uncertain, failed (no usable answer) or is not trusted by the gate
on this criterion."""

ADJUDICATION_RESULTS: dict[str, AdjudicationResult] = {r: r for r in get_args(AdjudicationResult)}


@dataclass(frozen=True)
class PeerAnswer:
    """One judge's answer as the adjudicator is shown it: what, never who."""

    status: str
    evidence: str
    time_s: float | None = None
    level: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``level`` only on a graded answer)."""
        return {
            **field_dict(self, "status", "evidence", "time_s"),
            **({} if self.level is None else {"level": self.level}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PeerAnswer:
        """Inverse of :meth:`to_dict`."""
        t, level = data.get("time_s"), data.get("level")
        return cls(
            str(data["status"]),
            str(data.get("evidence") or ""),
            None if t is None else float(t),
            None if level is None else int(level),
        )

    def sort_key(self) -> tuple[str, int, str, float]:
        """A fixed order from the content alone (never the panel's order of judges)."""
        return (
            self.status,
            -1 if self.level is None else self.level,
            self.evidence,
            -1.0 if self.time_s is None else self.time_s,
        )


def anonymous_answers(verdicts: Sequence[Verdict]) -> tuple[PeerAnswer, ...]:
    """The judges' answers as the adjudicator sees them, in an order that names no judge."""
    answers = [
        PeerAnswer(v.status.value, v.evidence.description, v.evidence.time_s, v.level)
        for v in verdicts
    ]
    return tuple(sorted(answers, key=PeerAnswer.sort_key))


@dataclass(frozen=True)
class AdjudicatorReply:
    """What an adjudicator returned: a verdict, a judge failure or nothing, and its prompt."""

    result: Verdict | JudgeFailure | None
    prompt: str | None = None
    """The prompt as sent (its text parts; each image by its frame), when the judge builds one."""
    prompt_version: str | None = None


@dataclass(frozen=True)
class Adjudication:
    """One adjudication of one criterion, stored with the evaluation it belongs to."""

    criterion: str
    adjudicator_id: str
    """The adjudicator as it votes (and is calibrated): its effective profile id."""
    adjudicator_hash: str
    reason: str
    """Why it was asked: the panel's rule and the disagreement it saw (stored, never shown)."""
    answers: tuple[PeerAnswer, ...]
    """The other judges' answers it was shown, anonymous."""
    trusted: bool
    """Whether the gate trusts the adjudicator on this criterion (only then it decides)."""
    result: AdjudicationResult
    verdict: Verdict | None = None
    failure: JudgeFailure | None = None
    prompt: str | None = None
    prompt_version: str | None = None

    @property
    def decided(self) -> bool:
        """Whether its verdict decided the criterion (no person needed)."""
        return self.result == "decided"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **fields_of(self),
            "answers": [a.to_dict() for a in self.answers],
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "failure": None if self.failure is None else self.failure.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Adjudication:
        """Inverse of :meth:`to_dict`."""
        verdict, failure = data.get("verdict"), data.get("failure")
        return cls(
            criterion=str(data["criterion"]),
            adjudicator_id=str(data["adjudicator_id"]),
            adjudicator_hash=str(data.get("adjudicator_hash") or ""),
            reason=str(data.get("reason") or ""),
            answers=tuple(PeerAnswer.from_dict(a) for a in data.get("answers") or ()),
            trusted=bool(data.get("trusted")),
            result=ADJUDICATION_RESULTS[str(data["result"])],
            verdict=None if verdict is None else Verdict.from_dict(verdict),
            failure=None if failure is None else JudgeFailure.from_dict(failure),
            prompt=data.get("prompt"),
            prompt_version=data.get("prompt_version"),
        )
