"""The jury: one decision per criterion from eligible judges, then the evaluation outcome.

Pure functions, no I/O; the only place where the outcome rule of the method lives.

Per criterion:

- a criterion the task marks ``applicable: false`` is ``not_applicable``, always;
- ``human`` verdicts (from review) decide their criterion: an adjudication alone, otherwise the
  labels together (labels that disagree leave it ``uncertain``);
- only eligible judges vote (latest calibration passed the gate; static rules always eligible);
- majority vote, with the safety rule: a ``pass`` majority over an eligible ``fail`` dissent,
  or a tie, becomes ``uncertain`` with the disagreement recorded;
- no eligible judge: the automatic verdicts are kept for inspection and the criterion is
  ``uncertain`` with review reason ``no_reliable_judge``;
- an eligible judge that could not answer (a recorded judge failure) leaves the criterion
  ``uncertain`` with review reason ``judge_failure`` unless an eligible judge says ``fail``;
- a judge's ``not_applicable`` on a criterion the task declares applicable counts as
  ``uncertain``;
- a criterion that asks whether there is *a recognisable* thing (P1; B1 of the task versions
  whose prompts state every scored condition) is passed only by a recognising judge: the
  ``pass`` of a judge that measures but does not recognise (kinds ``static`` and ``geometry``,
  or ``params.recognises: false``) is recorded and not counted (its ``fail`` still counts);
  when that leaves no vote the criterion is ``uncertain`` with review reason
  ``no_recognising_judge``.

Per run (:func:`decide_outcome`): a declared rule that broke (:func:`broken_rules`: no SVG, a
failed static check, a render over the render budget) or a necessary criterion that failed →
``fail``; else a failure of the machinery (checks or render)
→ ``incomplete`` with its cause; else a necessary criterion left ``uncertain`` → ``pending``
with its reasons; else ``pass``. Optional criteria never decide.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from judges.graded_jury import LevelStatus, decide_graded
from judges.inputs import CheckSummary, RenderSummary
from judges.model import (
    CriterionOutcome,
    CriterionStatus,
    JudgeFailure,
    JudgeProfile,
    Outcome,
    Verdict,
    VerdictStatus,
    Vote,
)
from judges.panel import DEFAULT_MAX_LEVEL_SPREAD
from judges.reasons import (
    ADJUDICATION,
    JUDGE_FAILURE,
    JUDGE_UNCERTAIN,
    JUDGES_DISAGREE,
    NO_RECOGNISING_JUDGE,
    NO_RELIABLE_JUDGE,
    REVIEWER_UNCERTAIN,
    REVIEWERS_DISAGREE,
)
from judges.rubric_score import RubricScore
from tasks import Criterion, CriterionKind

EligibilityFn = Callable[[JudgeProfile, str, str], bool]
"""``(judge profile as it votes, criterion_id, task_family) -> eligible``."""

Eligibility: TypeAlias = (
    EligibilityFn | Mapping[tuple[str, str, str], bool] | Mapping[tuple[str, str], bool] | None
)
"""Who earned a vote.

A callable (the service's gate table, which also checks the profile's content hash), or a
mapping keyed ``(profile_id, criterion_id, family)`` or ``(profile_id, criterion_id)``;
``None`` means no calibrated judge (only static rules vote).
"""

ALWAYS_ELIGIBLE_KINDS = frozenset({"static", "human"})
"""Deterministic rules need no calibration; people decide by review."""

__all__ = [
    "ADJUDICATION",
    "JUDGES_DISAGREE",
    "JUDGE_FAILURE",
    "JUDGE_UNCERTAIN",
    "NO_RECOGNISING_JUDGE",
    "NO_RELIABLE_JUDGE",
    "REVIEWERS_DISAGREE",
    "REVIEWER_UNCERTAIN",
    "broken_rules",
    "decide_criterion",
    "decide_outcome",
    "is_eligible",
    "needs_recognition",
    "recognises",
]

RECOGNITION = re.compile(r"\b(?:a|an) recogni[sz]able\b", re.IGNORECASE)
"""A question that asks whether there *is* a recognisable thing ("Is there a recognisable
pelican?"); "parts, each recognisable" (B1 of the first task versions) asks about parts that
mask geometry can see, and keeps its frozen meaning."""
NON_RECOGNISING_KINDS = frozenset({"static", "geometry"})
"""Judge kinds that measure or check but never recognise what a drawing shows."""
NOT_RECOGNISING = "not a recognising judge: its pass cannot confirm that something is recognisable"


def needs_recognition(criterion: Criterion) -> bool:
    """Whether the criterion asks for something recognisable (a recognising judge's to pass)."""
    return RECOGNITION.search(criterion.question) is not None


def recognises(profile: JudgeProfile) -> bool:
    """Whether a judge recognises what it sees (``params.recognises`` wins over its kind)."""
    value = profile.params.get("recognises")
    if isinstance(value, bool):
        return value
    return profile.kind not in NON_RECOGNISING_KINDS


NO_SVG_RULE = "no_svg"
RENDER_BUDGET_RULE = "render_budget"
"""The declared rule a drawing breaks when its render exceeds the render budget (wall clock or
memory of the sandbox) although it passed the static checks: its cost, never the machinery's."""
RENDER_BUDGET_REASON = "exceeds the render budget"


def broken_rules(checks: CheckSummary | None, render: RenderSummary) -> tuple[str, ...]:
    """The declared rules the work broke: ``no_svg``, each failed check, ``render_budget``."""
    rules: list[str] = []
    if checks is not None:
        if not checks.svg_found:
            rules.append(NO_SVG_RULE)
        rules.extend(f.check_id for f in checks.failed)
    if render.status == "over_budget":
        rules.append(RENDER_BUDGET_RULE)
    return tuple(rules)


def is_eligible(
    eligibility: Eligibility, profile: JudgeProfile, criterion_id: str, family: str
) -> bool:
    """Whether a judge (as it votes) has a vote on a criterion of a task family."""
    if profile.kind in ALWAYS_ELIGIBLE_KINDS:
        return True
    if eligibility is None:
        return False
    if callable(eligibility):
        return bool(eligibility(profile, criterion_id, family))
    table = cast(Mapping[Any, bool], eligibility)
    if (profile.id, criterion_id, family) in table:
        return bool(table[(profile.id, criterion_id, family)])
    return bool(table.get((profile.id, criterion_id), False))


_AS_CRITERION: dict[VerdictStatus, CriterionStatus] = {
    VerdictStatus.PASS: "pass",
    VerdictStatus.FAIL: "fail",
    VerdictStatus.UNCERTAIN: "uncertain",
    VerdictStatus.NOT_APPLICABLE: "not_applicable",
}


def _counted_status(status: VerdictStatus) -> VerdictStatus:
    return VerdictStatus.UNCERTAIN if status is VerdictStatus.NOT_APPLICABLE else status


def _describe(votes: Iterable[Vote]) -> str:
    return "; ".join(f"{v.judge_profile_id}={v.status.value}" for v in votes if v.eligible)


def _open(
    criterion: Criterion, reason: str, votes: tuple[Vote, ...], **extra: Any
) -> CriterionOutcome:
    """An ``uncertain`` criterion; review is required when it is necessary."""
    necessary = criterion.kind is CriterionKind.NECESSARY
    return CriterionOutcome(
        criterion.id, criterion.kind.value, "uncertain", necessary, reason, votes, **extra
    )


def _human_decision(criterion: Criterion, humans: Sequence[Verdict]) -> CriterionOutcome:
    votes = tuple(Vote(v.judge_profile_id, v.status, True) for v in humans)
    adjudications = [v for v in humans if v.details.get(ADJUDICATION) is True]
    statuses = {v.status for v in (adjudications[-1:] or humans)}
    if len(statuses) > 1:
        return _open(criterion, REVIEWERS_DISAGREE, votes, disagreement=_describe(votes))
    status = next(iter(statuses))
    if status is VerdictStatus.UNCERTAIN:
        return _open(criterion, REVIEWER_UNCERTAIN, votes)
    return CriterionOutcome(criterion.id, criterion.kind.value, _AS_CRITERION[status], votes=votes)


def decide_criterion(
    criterion: Criterion,
    verdicts: Sequence[Verdict],
    failures: Sequence[JudgeFailure],
    eligible: Callable[[str], bool],
    *,
    humans: Sequence[Verdict] = (),
    recognising: Callable[[str], bool] | None = None,
    rule: str = "split",
    level_status: LevelStatus | None = None,
    max_level_spread: float = DEFAULT_MAX_LEVEL_SPREAD,
) -> CriterionOutcome:
    """Decide one criterion. ``eligible(profile_id)`` says who votes (for this criterion).

    ``recognising(profile_id)``, given for a criterion that asks for something recognisable,
    says whose ``pass`` may count there. ``rule`` is the panel's disagreement rule (``split``
    or ``any_fail_vs_pass``). A graded criterion is decided on levels
    (:func:`judges.graded_jury.decide_graded`, with ``level_status``: the rubric's bounds).
    """
    kind = criterion.kind.value
    if not criterion.applicable:
        return CriterionOutcome(criterion.id, kind, "not_applicable")
    if criterion.graded:
        return decide_graded(
            criterion,
            verdicts,
            failures,
            eligible,
            status_of=level_status or (lambda _level: "pass"),
            max_level_spread=max_level_spread,
            humans=humans,
        )
    if humans:
        return _human_decision(criterion, humans)
    votes = tuple(_vote(v, eligible, recognising) for v in verdicts)
    counted = [v for v in votes if v.eligible]
    broken = [f for f in failures if eligible(f.judge_profile_id)]
    if not counted and not broken:
        set_aside = any(v.note == NOT_RECOGNISING for v in votes)
        return _open(criterion, NO_RECOGNISING_JUDGE if set_aside else NO_RELIABLE_JUDGE, votes)
    # applicability is the task's call: on an applicable criterion a judge's "not_applicable"
    # counts as "uncertain", so no judge can wave a necessary condition away
    tally = Counter(_counted_status(v.status) for v in counted)
    if broken and tally[VerdictStatus.FAIL] == 0:
        cause = "; ".join(f"{f.judge_profile_id}: {f.cause}" for f in broken)
        return _open(criterion, JUDGE_FAILURE, votes, cause=cause)
    if rule == "any_fail_vs_pass" and tally[VerdictStatus.FAIL] and tally[VerdictStatus.PASS]:
        return _open(criterion, JUDGES_DISAGREE, votes, disagreement=_describe(votes))
    return _majority(criterion, votes, tally)


def _vote(
    verdict: Verdict,
    eligible: Callable[[str], bool],
    recognising: Callable[[str], bool] | None,
) -> Vote:
    pid = verdict.judge_profile_id
    vote = Vote(pid, verdict.status, eligible(pid))
    if recognising is not None and verdict.status is VerdictStatus.PASS and not recognising(pid):
        return Vote(pid, verdict.status, False, NOT_RECOGNISING)  # recorded, not counted
    return vote


def _majority(
    criterion: Criterion, votes: tuple[Vote, ...], tally: Counter[VerdictStatus]
) -> CriterionOutcome:
    ranked = tally.most_common()
    top_status, top_count = ranked[0]
    tie = len(ranked) > 1 and ranked[1][1] == top_count
    if tie or (top_status is VerdictStatus.PASS and tally[VerdictStatus.FAIL] > 0):
        return _open(criterion, JUDGES_DISAGREE, votes, disagreement=_describe(votes))
    disagreement = _describe(votes) if len(ranked) > 1 else None
    if top_status is VerdictStatus.UNCERTAIN:
        return _open(criterion, JUDGE_UNCERTAIN, votes, disagreement=disagreement)
    return CriterionOutcome(
        criterion.id,
        criterion.kind.value,
        _AS_CRITERION[top_status],
        votes=votes,
        disagreement=disagreement,
    )


def _fail_reason(c: CriterionOutcome, rubric: RubricScore | None) -> str:
    """``R2: fail``; a graded criterion names its level and the bound it missed."""
    if c.level is None or rubric is None:
        return f"{c.criterion}: fail"
    missed = [b.text for b in rubric.failed_bounds() if b.criterion == c.criterion]
    if not missed:
        return f"{c.criterion}: fail (level {c.level})"
    return f"{c.criterion}: level {c.level} fails the minimum {', '.join(missed)}"


def decide_outcome(
    criteria: Sequence[CriterionOutcome],
    *,
    broken_rules: Sequence[str] = (),
    machinery_failure: str | None = None,
    rubric: RubricScore | None = None,
) -> Outcome:
    """Combine criterion outcomes into the run's outcome. Necessary criteria decide.

    ``broken_rules`` names declared rules the work broke (:func:`broken_rules`): the work fails
    by them whatever the judges said. ``machinery_failure`` is the cause when the checks or the
    render did not finish: the outcome is then ``incomplete``, unless the work already failed.
    ``rubric`` is the task's rubric on the decided levels: a score below its threshold is one
    more necessary condition failed (its bounds fail through their graded criteria).
    """
    necessary = [c for c in criteria if c.kind == CriterionKind.NECESSARY.value]
    failed = [c for c in necessary if c.status == "fail"]
    under = rubric is not None and rubric.threshold_met is False
    if failed or broken_rules or under:
        reasons = [_fail_reason(c, rubric) for c in failed]
        if rubric is not None and under:
            reasons.append(f"{rubric.name} = {rubric.score_text} < {rubric.threshold:g}")
        static = [r for r in broken_rules if r != RENDER_BUDGET_RULE]
        if static and not failed:
            reasons.append("static checks failed: " + ", ".join(static))
        if RENDER_BUDGET_RULE in broken_rules:
            reasons.append(RENDER_BUDGET_REASON)
        return Outcome("fail", tuple(reasons))
    if machinery_failure is not None:
        return Outcome("incomplete", (), machinery_failure)
    open_ = [c for c in necessary if c.status == "uncertain"]
    if open_:
        return Outcome("pending", tuple(f"{c.criterion}: {c.review_reason}" for c in open_))
    if rubric is not None and rubric.threshold_met is None:  # decided by a person without a level
        missing = ", ".join(rubric.missing)
        return Outcome("pending", (f"{rubric.name}: no level for {missing}",))
    return Outcome("pass")
