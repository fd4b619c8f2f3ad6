"""The jury on a graded criterion: one level from the eligible judges' levels, or a person.

Levels are ordinal, so they are never averaged: the decided level is the lower median of the
eligible judges' levels, and only when they agree — their spread is at most the panel's
``max_level_spread`` (1.5 by default: levels two apart disagree) and at least as many of them
gave a level as could not tell. Otherwise the criterion is ``uncertain`` with the jury's review
reason, as on a pass/fail criterion: ``judges_disagree`` (then an adjudicator may settle it),
``judge_uncertain``, ``judge_failure`` or ``no_reliable_judge``. People decide their criterion:
a reviewer's level (an adjudication alone) is the level.

The status of a decided level is ``pass`` when it meets the rubric's bounds on the criterion and
``fail`` otherwise (``status_of``), so a necessary graded criterion below its minimum fails the
work by the usual outcome rule. Pure: no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from judges import reasons as jury
from judges.model import (
    CriterionOutcome,
    CriterionStatus,
    JudgeFailure,
    Verdict,
    VerdictStatus,
    Vote,
)
from tasks import Criterion, CriterionKind

_AS_STATUS: dict[VerdictStatus, CriterionStatus] = {
    VerdictStatus.PASS: "pass",
    VerdictStatus.FAIL: "fail",
    VerdictStatus.UNCERTAIN: "uncertain",
    VerdictStatus.NOT_APPLICABLE: "not_applicable",
}

LevelStatus = Callable[[int], str]
"""``level -> "pass" | "fail"``: whether a level meets the rubric's bounds on the criterion."""


def _describe(votes: Sequence[Vote]) -> str:
    return "; ".join(
        f"{v.judge_profile_id}={v.level if v.level is not None else v.status.value}"
        for v in votes
        if v.eligible
    )


def _open(
    criterion: Criterion,
    reason: str,
    votes: tuple[Vote, ...],
    *,
    disagreement: str | None = None,
    cause: str | None = None,
) -> CriterionOutcome:
    necessary = criterion.kind is CriterionKind.NECESSARY
    return CriterionOutcome(
        criterion.id,
        criterion.kind.value,
        "uncertain",
        necessary,
        reason,
        votes,
        disagreement=disagreement,
        cause=cause,
    )


def decided(
    criterion: Criterion,
    level: int,
    status_of: LevelStatus,
    votes: tuple[Vote, ...] = (),
    disagreement: str | None = None,
) -> CriterionOutcome:
    """A graded criterion decided at ``level`` (its status from the rubric's bounds)."""
    status: CriterionStatus = "pass" if status_of(level) == "pass" else "fail"
    return CriterionOutcome(
        criterion.id,
        criterion.kind.value,
        status,
        votes=votes,
        disagreement=disagreement,
        level=level,
    )


def decide_graded(
    criterion: Criterion,
    verdicts: Sequence[Verdict],
    failures: Sequence[JudgeFailure],
    eligible: Callable[[str], bool],
    *,
    status_of: LevelStatus,
    max_level_spread: float,
    humans: Sequence[Verdict] = (),
) -> CriterionOutcome:
    """Decide one graded criterion (see the module text)."""
    if humans:
        return _human_level(criterion, humans, status_of)
    votes = tuple(
        Vote(v.judge_profile_id, v.status, eligible(v.judge_profile_id), level=v.level)
        for v in verdicts
    )
    counted = [v for v in votes if v.eligible]
    broken = [f for f in failures if eligible(f.judge_profile_id)]
    if not counted and not broken:
        return _open(criterion, jury.NO_RELIABLE_JUDGE, votes)
    levels = sorted(v.level for v in counted if v.level is not None)
    unsure = len(counted) - len(levels)
    low = statistics.median_low(levels) if levels else None
    if broken and (low is None or status_of(low) == "pass"):
        cause = "; ".join(f"{f.judge_profile_id}: {f.cause}" for f in broken)
        return _open(criterion, jury.JUDGE_FAILURE, votes, cause=cause)
    described = _describe(votes) if unsure or len(set(levels)) > 1 else None
    if low is None or unsure > len(levels):
        return _open(criterion, jury.JUDGE_UNCERTAIN, votes, disagreement=described)
    if unsure == len(levels) or levels[-1] - levels[0] > max_level_spread:
        return _open(criterion, jury.JUDGES_DISAGREE, votes, disagreement=described)
    return decided(criterion, low, status_of, votes, described)


def _human_level(
    criterion: Criterion, humans: Sequence[Verdict], status_of: LevelStatus
) -> CriterionOutcome:
    """People's levels decide: the last adjudication alone, else every reviewer's level."""
    votes = tuple(Vote(v.judge_profile_id, v.status, True, level=v.level) for v in humans)
    adjudications = [v for v in humans if v.details.get(jury.ADJUDICATION) is True]
    deciding = adjudications[-1:] or list(humans)
    levels = {v.level for v in deciding}
    if len(levels) > 1:
        return _open(criterion, jury.REVIEWERS_DISAGREE, votes, disagreement=_describe(votes))
    (level,) = levels
    if level is not None:
        return decided(criterion, level, status_of, votes)
    statuses = {v.status for v in deciding}
    if len(statuses) > 1:
        return _open(criterion, jury.REVIEWERS_DISAGREE, votes, disagreement=_describe(votes))
    (status,) = statuses
    if status is VerdictStatus.UNCERTAIN:
        return _open(criterion, jury.REVIEWER_UNCERTAIN, votes)
    # a person's pass / fail without a level decides the criterion; the score stays unknown
    return CriterionOutcome(criterion.id, criterion.kind.value, _AS_STATUS[status], votes=votes)
