"""Automatic adjudication: when a panel's judges disagree, its adjudicator decides.

A panel may name an ``adjudicator`` (any judge profile). When the eligible judges of a criterion
disagree — by the panel's rule: no majority or a ``pass`` majority over a ``fail``
(``split``), or any ``fail`` beside any ``pass`` (``any_fail_vs_pass``), or on a graded
criterion levels spread wider than ``max_level_spread`` — the adjudicator is asked with the
frames, the criterion and the judges' answers (status or level and evidence, never who gave
them: :func:`judges.adjudication_record.anonymous_answers`). A judge kind that knows how to
adjudicate (a ``adjudicate(inp, answers)`` method, as the vision judge has) gets the answers;
any other judge is asked the criterion on its own.

Its verdict decides the criterion only when the gate trusts the adjudicator on that criterion
(calibrated like any judge); when it is not trusted, is uncertain or fails, the criterion stays
``uncertain`` for a person, with the reason (``adjudicator_not_trusted``,
``adjudicator_uncertain``, ``adjudicator_failed``). Everything is recorded
(:class:`~judges.adjudication_record.Adjudication`). Answers reused from an earlier evaluation
reuse its adjudications and never ask again. Pure apart from the adjudicator's own call.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from judges.adjudication_record import (
    Adjudication,
    AdjudicationResult,
    AdjudicatorReply,
    PeerAnswer,
    anonymous_answers,
)
from judges.base import Judge
from judges.graded_jury import LevelStatus, decided
from judges.inputs import JudgeInput
from judges.model import (
    CriterionOutcome,
    CriterionStatus,
    JudgeFailure,
    JudgeProfile,
    Verdict,
    VerdictStatus,
)
from judges.reasons import (
    ADJUDICATOR_FAILED,
    ADJUDICATOR_NOT_TRUSTED,
    ADJUDICATOR_UNCERTAIN,
    JUDGES_DISAGREE,
)
from tasks import Criterion

REASONS: dict[AdjudicationResult, str] = {
    "adjudicator_uncertain": ADJUDICATOR_UNCERTAIN,
    "adjudicator_failed": ADJUDICATOR_FAILED,
    "adjudicator_not_trusted": ADJUDICATOR_NOT_TRUSTED,
}


@runtime_checkable
class Adjudicating(Protocol):
    """A judge that can weigh other judges' anonymous answers (the vision judge can)."""

    profile: JudgeProfile

    def adjudicate(self, inp: JudgeInput, answers: Sequence[PeerAnswer]) -> AdjudicatorReply:
        """Decide the criterion having seen the frames and the other judges' answers."""
        ...


def disputed(outcome: CriterionOutcome) -> bool:
    """Whether the jury left the criterion to be settled because its judges disagree."""
    return outcome.status == "uncertain" and outcome.review_reason == JUDGES_DISAGREE


def ask_adjudicator(
    judge: Judge, inp: JudgeInput, answers: Sequence[PeerAnswer]
) -> AdjudicatorReply:
    """The adjudicator's reply; a judge that raises is a ``judge_crashed`` failure."""
    started = time.perf_counter()
    try:
        if isinstance(judge, Adjudicating):
            return judge.adjudicate(inp, answers)
        if not judge.answers(inp.task, inp.criterion):
            detail = f"{judge.profile.id} does not answer criterion {inp.criterion.id}"
            failure = JudgeFailure(inp.criterion.id, judge.profile.id, "not_answered", detail)
            return AdjudicatorReply(failure)
        return AdjudicatorReply(judge.judge(inp))
    except Exception as exc:  # a broken adjudicator is a recorded failure, never a verdict
        ms = (time.perf_counter() - started) * 1000.0
        detail = f"{type(exc).__name__}: {exc}"
        crashed = JudgeFailure(inp.criterion.id, judge.profile.id, "judge_crashed", detail, ms)
        return AdjudicatorReply(crashed)


def _result(criterion: Criterion, trusted: bool, verdict: Verdict | None) -> AdjudicationResult:
    if verdict is None:
        return "adjudicator_failed"
    if criterion.graded:
        answered = verdict.level is not None
    else:
        answered = verdict.status in (VerdictStatus.PASS, VerdictStatus.FAIL)
    if not answered:
        return "adjudicator_uncertain"
    return "decided" if trusted else "adjudicator_not_trusted"


def settle(
    criterion: Criterion,
    outcome: CriterionOutcome,
    adjudication: Adjudication,
    level_status: LevelStatus,
) -> CriterionOutcome:
    """The criterion after its adjudication: decided by it, or left to a person with why."""
    verdict = adjudication.verdict
    if adjudication.result != "decided" or verdict is None:
        cause = adjudication.failure.cause if adjudication.failure is not None else outcome.cause
        return CriterionOutcome(
            outcome.criterion,
            outcome.kind,
            "uncertain",
            outcome.review_required,
            REASONS.get(adjudication.result, JUDGES_DISAGREE),
            outcome.votes,
            outcome.disagreement,
            cause,
        )
    if criterion.graded and verdict.level is not None:
        return decided(criterion, verdict.level, level_status, outcome.votes, outcome.disagreement)
    status: CriterionStatus = "pass" if verdict.status is VerdictStatus.PASS else "fail"
    return CriterionOutcome(
        outcome.criterion,
        outcome.kind,
        status,
        votes=outcome.votes,
        disagreement=outcome.disagreement,
    )


def adjudicate(
    inp: JudgeInput,
    outcome: CriterionOutcome,
    verdicts: Sequence[Verdict],
    judge: Judge,
    *,
    trusted: bool,
    rule: str,
) -> Adjudication:
    """Ask the adjudicator about one disputed criterion and record everything.

    ``verdicts`` are the counted judges' verdicts on it (shown anonymously); ``trusted`` is the
    gate's word on the adjudicator for this criterion.
    """
    answers = anonymous_answers(verdicts)
    reply = ask_adjudicator(judge, inp, answers)
    verdict = reply.result if isinstance(reply.result, Verdict) else None
    failure = reply.result if isinstance(reply.result, JudgeFailure) else None
    if reply.result is None:
        failure = JudgeFailure(inp.criterion.id, judge.profile.id, "abstained", "no answer")
    return Adjudication(
        criterion=inp.criterion.id,
        adjudicator_id=judge.profile.id,
        adjudicator_hash=judge.profile.content_hash(),
        reason=f"judges disagree (rule {rule}): {outcome.disagreement or 'no majority'}",
        answers=answers,
        trusted=trusted,
        result=_result(inp.criterion, trusted, verdict),
        verdict=verdict,
        failure=failure,
        prompt=reply.prompt,
        prompt_version=reply.prompt_version,
    )


def retrusted(adjudication: Adjudication, criterion: Criterion, trusted: bool) -> Adjudication:
    """A stored adjudication read again under the gate in force now."""
    result = _result(criterion, trusted, adjudication.verdict)
    return dataclasses.replace(adjudication, trusted=trusted, result=result)


def adjudicate_all(
    inp_for: Callable[[Criterion], JudgeInput],
    criteria: Sequence[Criterion],
    outcomes: Sequence[CriterionOutcome],
    verdicts: Sequence[Verdict],
    *,
    judge: Judge | None,
    trusted: Callable[[str], bool],
    rule: str,
    level_status: Callable[[str], LevelStatus],
    reused: Mapping[str, Adjudication] | None = None,
) -> tuple[list[CriterionOutcome], list[Adjudication]]:
    """Settle every disputed criterion with the panel's adjudicator.

    ``reused`` (answers of an earlier evaluation) holds its adjudications by criterion: they are
    read again under today's gate and nothing is asked; a disputed criterion without one stays
    with people. Without ``reused`` the adjudicator ``judge`` is asked.
    """
    settled: list[CriterionOutcome] = []
    made: list[Adjudication] = []
    for criterion, outcome in zip(criteria, outcomes, strict=True):
        found: Adjudication | None = None
        if disputed(outcome):
            if reused is not None:
                old = reused.get(criterion.id)
                found = None if old is None else retrusted(old, criterion, trusted(criterion.id))
            elif judge is not None:
                counted = {v.judge_profile_id for v in outcome.votes if v.eligible}
                shown = [
                    v
                    for v in verdicts
                    if v.criterion == criterion.id and v.judge_profile_id in counted
                ]
                found = adjudicate(
                    inp_for(criterion),
                    outcome,
                    shown,
                    judge,
                    trusted=trusted(criterion.id),
                    rule=rule,
                )
        if found is None:
            settled.append(outcome)
            continue
        made.append(found)
        settled.append(settle(criterion, outcome, found, level_status(criterion.id)))
    return settled, made
