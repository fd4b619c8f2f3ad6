"""The jury: one decision per criterion from eligible judges, then the evaluation outcome.

Pure functions, no I/O. Rules (issue 5):

- a criterion the task marks ``applicable: false`` is ``not_applicable``, always;
- a ``human`` verdict (from review) decides its criterion;
- only eligible judges vote (latest calibration passed the gate; static rules always eligible);
- majority vote, with the safety rule: a ``pass`` majority over an eligible ``fail`` dissent,
  or a tie, becomes ``uncertain`` with the disagreement recorded;
- no eligible judge: the automatic verdicts are kept for inspection and the criterion is
  ``uncertain`` with review reason ``no_reliable_judge``;
- an eligible judge that errored leaves the criterion ``incomplete`` unless the others say fail;
- a judge's ``not_applicable`` on a criterion the task declares applicable counts as ``uncertain``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from judges.model import (
    CriterionOutcome,
    CriterionStatus,
    JudgeFailure,
    Outcome,
    Verdict,
    VerdictStatus,
    Vote,
)
from tasks import Criterion, CriterionKind

EligibilityFn = Callable[[str, str, str], bool]
"""``(judge_profile_id, criterion_id, task_family) -> eligible``."""

Eligibility: TypeAlias = (
    EligibilityFn | Mapping[tuple[str, str, str], bool] | Mapping[tuple[str, str], bool] | None
)
"""Who earned a vote. A callable, or a mapping keyed ``(profile_id, criterion_id, family)`` or
``(profile_id, criterion_id)``; ``None`` means no calibrated judge (only static rules vote)."""

ALWAYS_ELIGIBLE_KINDS = frozenset({"static"})
"""Deterministic rules need no calibration."""

NO_RELIABLE_JUDGE = "no_reliable_judge"
JUDGES_DISAGREE = "judges_disagree"
JUDGE_UNCERTAIN = "judge_uncertain"
REVIEWERS_DISAGREE = "reviewers_disagree"
REVIEWER_UNCERTAIN = "reviewer_uncertain"


def is_eligible(
    eligibility: Eligibility, profile_id: str, kind: str, criterion_id: str, family: str
) -> bool:
    """Whether a judge profile has a vote on a criterion of a task family."""
    if kind in ALWAYS_ELIGIBLE_KINDS:
        return True
    if eligibility is None:
        return False
    if callable(eligibility):
        return bool(eligibility(profile_id, criterion_id, family))
    table = cast(Mapping[Any, bool], eligibility)
    if (profile_id, criterion_id, family) in table:
        return bool(table[(profile_id, criterion_id, family)])
    return bool(table.get((profile_id, criterion_id), False))


def _human_decision(criterion: Criterion, humans: Sequence[Verdict]) -> CriterionOutcome:
    votes = tuple(Vote(v.judge_profile_id, v.status, True) for v in humans)
    statuses = {v.status for v in humans}
    necessary = criterion.kind is CriterionKind.NECESSARY
    if len(statuses) > 1:
        return CriterionOutcome(
            criterion.id,
            criterion.kind.value,
            "uncertain",
            necessary,
            REVIEWERS_DISAGREE,
            votes,
            disagreement=_describe(votes),
        )
    status = next(iter(statuses))
    if status is VerdictStatus.UNCERTAIN:
        return CriterionOutcome(
            criterion.id, criterion.kind.value, "uncertain", necessary, REVIEWER_UNCERTAIN, votes
        )
    return CriterionOutcome(criterion.id, criterion.kind.value, _status(status), False, None, votes)


_AS_CRITERION: dict[VerdictStatus, CriterionStatus] = {
    VerdictStatus.PASS: "pass",
    VerdictStatus.FAIL: "fail",
    VerdictStatus.UNCERTAIN: "uncertain",
    VerdictStatus.NOT_APPLICABLE: "not_applicable",
}


def _status(status: VerdictStatus) -> CriterionStatus:
    return _AS_CRITERION[status]


def _counted_status(status: VerdictStatus) -> VerdictStatus:
    return VerdictStatus.UNCERTAIN if status is VerdictStatus.NOT_APPLICABLE else status


def _describe(votes: Iterable[Vote]) -> str:
    return "; ".join(f"{v.judge_profile_id}={v.status.value}" for v in votes if v.eligible)


def decide_criterion(
    criterion: Criterion,
    verdicts: Sequence[Verdict],
    failures: Sequence[JudgeFailure],
    eligible: Callable[[str], bool],
    *,
    humans: Sequence[Verdict] = (),
) -> CriterionOutcome:
    """Decide one criterion. ``eligible(profile_id)`` says who votes (for this criterion)."""
    kind = criterion.kind.value
    necessary = criterion.kind is CriterionKind.NECESSARY
    if not criterion.applicable:
        return CriterionOutcome(criterion.id, kind, "not_applicable")
    if humans:
        return _human_decision(criterion, humans)
    votes = tuple(
        Vote(v.judge_profile_id, v.status, eligible(v.judge_profile_id)) for v in verdicts
    )
    counted = [v for v in votes if v.eligible]
    broken = [f for f in failures if eligible(f.judge_profile_id)]
    if not counted and not broken:
        return CriterionOutcome(
            criterion.id, kind, "uncertain", necessary, NO_RELIABLE_JUDGE, votes
        )
    # applicability is the task's call: on an applicable criterion a judge's "not_applicable"
    # counts as "uncertain", so no judge can wave a necessary condition away
    tally = Counter(_counted_status(v.status) for v in counted)
    if broken and tally[VerdictStatus.FAIL] == 0:
        cause = "; ".join(f"{f.judge_profile_id}: {f.cause}" for f in broken)
        return CriterionOutcome(criterion.id, kind, "incomplete", False, None, votes, cause=cause)
    ranked = tally.most_common()
    top_status, top_count = ranked[0]
    tie = len(ranked) > 1 and ranked[1][1] == top_count
    if tie:
        return CriterionOutcome(
            criterion.id, kind, "uncertain", necessary, JUDGES_DISAGREE, votes, _describe(votes)
        )
    if top_status is VerdictStatus.PASS and tally[VerdictStatus.FAIL] > 0:
        return CriterionOutcome(
            criterion.id, kind, "uncertain", necessary, JUDGES_DISAGREE, votes, _describe(votes)
        )
    disagreement = _describe(votes) if len(ranked) > 1 else None
    if top_status is VerdictStatus.UNCERTAIN:
        return CriterionOutcome(
            criterion.id, kind, "uncertain", necessary, JUDGE_UNCERTAIN, votes, disagreement
        )
    return CriterionOutcome(
        criterion.id, kind, _status(top_status), False, None, votes, disagreement
    )


def decide_outcome(
    criteria: Sequence[CriterionOutcome], *, incomplete_cause: str | None = None
) -> Outcome:
    """Combine criterion outcomes. Necessary criteria decide; optional ones never do.

    Any necessary fail → ``fail``; else anything that could not finish → ``incomplete`` with
    its cause; else any necessary uncertain → ``pending`` with reasons; else ``pass``.
    """
    necessary = [c for c in criteria if c.kind == CriterionKind.NECESSARY.value]
    failed = [c for c in necessary if c.status == "fail"]
    if failed:
        return Outcome("fail", tuple(f"{c.criterion}: fail" for c in failed))
    broken = [c for c in necessary if c.status == "incomplete"]
    if incomplete_cause is not None or broken:
        causes = [incomplete_cause] if incomplete_cause else []
        causes += [f"{c.criterion}: {c.cause}" for c in broken]
        reasons = tuple(f"{c.criterion}: incomplete" for c in broken)
        return Outcome("incomplete", reasons, "; ".join(causes))
    open_ = [c for c in necessary if c.status == "uncertain"]
    if open_:
        return Outcome("pending", tuple(f"{c.criterion}: {c.review_reason}" for c in open_))
    return Outcome("pass")
