"""Jury and outcome rules (issue 5), on hand-made verdicts (``judges.evaluate``: test_evaluate)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from judges import (
    JUDGE_FAILURE,
    NO_RELIABLE_JUDGE,
    CriterionOutcome,
    CriterionStatus,
    Evidence,
    JudgeFailure,
    JudgeProfile,
    Verdict,
    VerdictStatus,
    decide_criterion,
    decide_outcome,
    human_verdict,
    is_eligible,
)
from tasks import Criterion, CriterionKind

NEC = Criterion(id="R2", kind=CriterionKind.NECESSARY, question="feet on pedals?")
OPT = Criterion(id="Q1", kind=CriterionKind.OPTIONAL, question="pretty?")


def v(status: str, judge: str = "a@1", criterion: str = "R2") -> Verdict:
    return Verdict(criterion, VerdictStatus(status), Evidence(None, None, "x"), judge)


def all_eligible(_pid: str) -> bool:
    return True


def only(*ids: str) -> Callable[[str], bool]:
    return lambda pid: pid in ids


def test_unanimous_pass_and_fail() -> None:
    out = decide_criterion(NEC, [v("pass", "a@1"), v("pass", "b@1")], [], all_eligible)
    assert (out.status, out.review_required, out.review_reason) == ("pass", False, None)
    out = decide_criterion(NEC, [v("fail", "a@1"), v("fail", "b@1")], [], all_eligible)
    assert out.status == "fail"


def test_majority_fail_over_pass_dissent_is_fail() -> None:
    votes = [v("fail", "a@1"), v("fail", "b@1"), v("pass", "c@1")]
    out = decide_criterion(NEC, votes, [], all_eligible)
    assert out.status == "fail"
    assert out.disagreement is not None and "c@1=pass" in out.disagreement


def test_pass_majority_over_eligible_fail_dissent_becomes_uncertain() -> None:
    votes = [v("pass", "a@1"), v("pass", "b@1"), v("fail", "c@1")]
    out = decide_criterion(NEC, votes, [], all_eligible)
    assert out.status == "uncertain"
    assert out.review_required and out.review_reason == "judges_disagree"
    assert out.disagreement == "a@1=pass; b@1=pass; c@1=fail"


def test_fail_dissent_from_ineligible_judge_does_not_block_pass() -> None:
    votes = [v("pass", "a@1"), v("pass", "b@1"), v("fail", "c@1")]
    out = decide_criterion(NEC, votes, [], only("a@1", "b@1"))
    assert out.status == "pass"
    assert [x.eligible for x in out.votes] == [True, True, False]


def test_tie_becomes_uncertain() -> None:
    out = decide_criterion(NEC, [v("pass", "a@1"), v("uncertain", "b@1")], [], all_eligible)
    assert (out.status, out.review_reason) == ("uncertain", "judges_disagree")


def test_majority_uncertain_needs_review() -> None:
    votes = [v("uncertain", "a@1"), v("uncertain", "b@1"), v("pass", "c@1")]
    out = decide_criterion(NEC, votes, [], all_eligible)
    assert (out.status, out.review_reason, out.review_required) == (
        "uncertain",
        "judge_uncertain",
        True,
    )


def test_judge_cannot_declare_an_applicable_criterion_not_applicable() -> None:
    out = decide_criterion(NEC, [v("not_applicable", "a@1")], [], all_eligible)
    assert (out.status, out.review_reason) == ("uncertain", "judge_uncertain")
    out = decide_criterion(NEC, [v("not_applicable", "a@1"), v("pass", "b@1")], [], all_eligible)
    assert (out.status, out.review_reason) == ("uncertain", "judges_disagree")


def test_no_eligible_judge_keeps_verdicts_for_inspection() -> None:
    out = decide_criterion(NEC, [v("pass", "a@1"), v("pass", "b@1")], [], only())
    assert out.status == "uncertain"
    assert out.review_reason == NO_RELIABLE_JUDGE == "no_reliable_judge"
    assert out.review_required
    assert [(x.judge_profile_id, x.status.value, x.eligible) for x in out.votes] == [
        ("a@1", "pass", False),
        ("b@1", "pass", False),
    ]


def test_no_judge_at_all_is_no_reliable_judge() -> None:
    out = decide_criterion(NEC, [], [], all_eligible)
    assert (out.status, out.review_reason) == ("uncertain", "no_reliable_judge")


def test_not_applicable_criterion_is_never_judged() -> None:
    crit = Criterion(id="A", kind=CriterionKind.NECESSARY, question="anim?", applicable=False)
    out = decide_criterion(crit, [v("fail", "a@1", "A")], [], all_eligible)
    assert (out.status, out.votes) == ("not_applicable", ())


def test_human_verdict_decides_over_judges() -> None:
    human = human_verdict("R2", "pass", "feet visibly on pedals", artifact_ref="frame-0.png")
    out = decide_criterion(
        NEC, [v("fail", "a@1"), v("fail", "b@1")], [], all_eligible, humans=[human]
    )
    assert out.status == "pass" and not out.review_required
    assert [x.judge_profile_id for x in out.votes] == ["human@1"]


def test_humans_who_disagree_keep_it_open() -> None:
    humans = [human_verdict("R2", "pass", "ok"), human_verdict("R2", "fail", "no")]
    out = decide_criterion(NEC, [], [], all_eligible, humans=humans)
    assert (out.status, out.review_reason) == ("uncertain", "reviewers_disagree")


def test_the_last_adjudication_settles_a_dispute_alone() -> None:
    def adjudication(status: str) -> Verdict:
        plain = human_verdict("R2", status, "adjudicated")
        return dataclasses.replace(plain, details={"adjudication": True})

    humans = [human_verdict("R2", "pass", "ok"), human_verdict("R2", "fail", "no")]
    out = decide_criterion(NEC, [], [], all_eligible, humans=[*humans, adjudication("fail")])
    assert (out.status, out.review_required) == ("fail", False)
    later = [*humans, adjudication("fail"), adjudication("pass")]
    assert decide_criterion(NEC, [], [], all_eligible, humans=later).status == "pass"


def test_eligible_judge_failure_leaves_criterion_uncertain_unless_fail() -> None:
    err = JudgeFailure("R2", "b@1", "timeout", "no reply")
    out = decide_criterion(NEC, [v("pass", "a@1")], [err], all_eligible)
    assert (out.status, out.review_reason) == ("uncertain", JUDGE_FAILURE)
    assert JUDGE_FAILURE == "judge_failure" and out.review_required
    assert out.cause == "b@1: timeout"
    # the only eligible judge could not answer: still a judge failure, not "no reliable judge"
    out = decide_criterion(NEC, [], [err], all_eligible)
    assert (out.status, out.review_reason, out.cause) == (
        "uncertain",
        JUDGE_FAILURE,
        "b@1: timeout",
    )
    out = decide_criterion(NEC, [v("fail", "a@1")], [err], all_eligible)
    assert out.status == "fail"
    # an ineligible judge's error is recorded but changes nothing
    out = decide_criterion(NEC, [v("pass", "a@1")], [err], only("a@1"))
    assert out.status == "pass"


def co(
    cid: str,
    status: CriterionStatus,
    kind: str = "necessary",
    reason: str | None = None,
    cause: str | None = None,
) -> CriterionOutcome:
    return CriterionOutcome(cid, kind, status, status == "uncertain", reason, cause=cause)


def test_outcome_rules() -> None:
    assert decide_outcome([co("F1", "pass"), co("R2", "pass")]).status == "pass"
    fail = decide_outcome([co("F1", "pass"), co("R2", "fail"), co("R1", "uncertain")])
    assert (fail.status, fail.reasons) == ("fail", ("R2: fail",))
    pending = decide_outcome([co("F1", "pass"), co("R2", "uncertain", reason="no_reliable_judge")])
    assert (pending.status, pending.reasons) == ("pending", ("R2: no_reliable_judge",))
    # a judge that could not answer leaves the work to review, never to "incomplete"
    failed_judge = co("R2", "uncertain", reason=JUDGE_FAILURE, cause="b@1: timeout")
    broken = decide_outcome([co("F1", "pass"), failed_judge])
    assert (broken.status, broken.reasons) == ("pending", ("R2: judge_failure",))
    cause = decide_outcome([co("F1", "pass")], machinery_failure="render_incomplete: timeout")
    assert (cause.status, cause.cause) == ("incomplete", "render_incomplete: timeout")
    # a machinery failure outranks criteria left for review...
    both = decide_outcome([co("F1", "pass"), failed_judge], machinery_failure="checks_unavailable")
    assert (both.status, both.cause) == ("incomplete", "checks_unavailable")
    # ...but a clear necessary failure still fails even if the machinery broke elsewhere
    crash = "render_incomplete: crash"
    assert decide_outcome([co("F1", "fail")], machinery_failure=crash).status == "fail"
    # and so does a declared rule the work broke, whatever the judges said
    ruled = decide_outcome([co("F1", "pass")], broken_rules=("script",), machinery_failure=crash)
    assert (ruled.status, ruled.reasons) == ("fail", ("static checks failed: script",))


def test_optional_never_decisive_and_not_applicable_never_counts_against() -> None:
    outs = [co("F1", "pass"), co("Q1", "fail", "optional"), co("A", "not_applicable")]
    assert decide_outcome(outs).status == "pass"
    outs = [co("F1", "pass"), co("Q1", "uncertain", "optional", "no_reliable_judge")]
    assert decide_outcome(outs).status == "pass"


def test_eligibility_forms() -> None:
    static = JudgeProfile("static@1", "static")
    geometry = JudgeProfile("geometry@1", "geometry")
    assert is_eligible(None, static, "F1", "fam")  # static rules: no calibration
    assert is_eligible(None, JudgeProfile("human@1", "human"), "R2", "fam")  # people decide
    assert not is_eligible(None, geometry, "R2", "fam")
    table3 = {("geometry@1", "R2", "fam"): True}
    assert is_eligible(table3, geometry, "R2", "fam")
    assert not is_eligible(table3, geometry, "R2", "other")
    table2 = {("geometry@1", "R2"): True}
    assert is_eligible(table2, geometry, "R2", "fam")
    seen: list[tuple[JudgeProfile, str, str]] = []

    def gate(profile: JudgeProfile, criterion: str, family: str) -> bool:
        seen.append((profile, criterion, family))
        return criterion == "R1"

    g = JudgeProfile("g@1", "geometry")
    assert is_eligible(gate, g, "R1", "fam")
    assert not is_eligible(gate, g, "R2", "fam")
    assert seen == [(g, "R1", "fam"), (g, "R2", "fam")]  # the callable sees the whole profile
