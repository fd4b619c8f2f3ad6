"""Jury and outcome rules (issue 5), on hand-made verdicts and through ``judges.evaluate``."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from judges import (
    NO_RELIABLE_JUDGE,
    CriterionOutcome,
    Evidence,
    JudgeFailure,
    JudgeInput,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    Verdict,
    VerdictStatus,
    decide_criterion,
    decide_outcome,
    evaluate,
    human_verdict,
    is_eligible,
)
from regua.settings import Settings
from tasks import Criterion, CriterionKind, TaskSpec, bundled_registry

NEC = Criterion(id="R2", kind=CriterionKind.NECESSARY, question="feet on pedals?")
OPT = Criterion(id="Q1", kind=CriterionKind.OPTIONAL, question="pretty?")


def v(status: str, judge: str = "a@1", criterion: str = "R2") -> Verdict:
    return Verdict(criterion, VerdictStatus(status), Evidence(None, None, "x"), judge)


def all_eligible(_: str) -> bool:
    return True


def only(*ids: str):
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


def test_eligible_judge_error_makes_criterion_incomplete_unless_fail() -> None:
    err = JudgeFailure("R2", "b@1", "timeout", "no reply")
    out = decide_criterion(NEC, [v("pass", "a@1")], [err], all_eligible)
    assert (out.status, out.cause) == ("incomplete", "b@1: timeout")
    out = decide_criterion(NEC, [v("fail", "a@1")], [err], all_eligible)
    assert out.status == "fail"
    # an ineligible judge's error is recorded but changes nothing
    out = decide_criterion(NEC, [v("pass", "a@1")], [err], only("a@1"))
    assert out.status == "pass"


def co(
    cid: str, status: str, kind: str = "necessary", reason: str | None = None
) -> CriterionOutcome:
    return CriterionOutcome(cid, kind, status, status == "uncertain", reason)


def test_outcome_rules() -> None:
    assert decide_outcome([co("F1", "pass"), co("R2", "pass")]).status == "pass"
    fail = decide_outcome([co("F1", "pass"), co("R2", "fail"), co("R1", "uncertain")])
    assert (fail.status, fail.reasons) == ("fail", ("R2: fail",))
    pending = decide_outcome([co("F1", "pass"), co("R2", "uncertain", reason="no_reliable_judge")])
    assert (pending.status, pending.reasons) == ("pending", ("R2: no_reliable_judge",))
    broken = decide_outcome([co("F1", "pass"), co("R2", "incomplete")])
    assert broken.status == "incomplete"
    cause = decide_outcome([co("F1", "pass")], incomplete_cause="render: timeout")
    assert (cause.status, cause.cause) == ("incomplete", "render: timeout")
    # a clear necessary failure still fails even if the machinery broke elsewhere
    assert decide_outcome([co("F1", "fail")], incomplete_cause="render: crash").status == "fail"


def test_optional_never_decisive_and_not_applicable_never_counts_against() -> None:
    outs = [co("F1", "pass"), co("Q1", "fail", "optional"), co("A", "not_applicable")]
    assert decide_outcome(outs).status == "pass"
    outs = [co("F1", "pass"), co("Q1", "uncertain", "optional", "no_reliable_judge")]
    assert decide_outcome(outs).status == "pass"


def test_eligibility_forms() -> None:
    assert is_eligible(None, "static@1", "static", "F1", "fam")  # static rules: no calibration
    assert not is_eligible(None, "geometry@1", "geometry", "R2", "fam")
    table3 = {("geometry@1", "R2", "fam"): True}
    assert is_eligible(table3, "geometry@1", "geometry", "R2", "fam")
    assert not is_eligible(table3, "geometry@1", "geometry", "R2", "other")
    table2 = {("geometry@1", "R2"): True}
    assert is_eligible(table2, "geometry@1", "geometry", "R2", "fam")
    assert is_eligible(lambda p, c, f: c == "R1", "g@1", "geometry", "R1", "fam")


class ScriptedJudge:
    """A plugin judge whose answers are fixed per criterion."""

    def __init__(self, profile: JudgeProfile, settings: Settings | None) -> None:
        self.profile = profile
        self.answers_ = dict(profile.params["answers"])

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        return criterion.id in self.answers_

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure:
        status = self.answers_[inp.criterion.id]
        if status == "boom":
            raise RuntimeError("judge bug")
        if status == "error":
            return JudgeFailure(inp.criterion.id, self.profile.id, "api_unreachable", "down")
        ev = Evidence("frame-0.png", None, f"scripted {status}")
        return Verdict(inp.criterion.id, VerdictStatus(status), ev, self.profile.id)


def scripted_registry(**answers: Mapping[str, str]) -> JudgeRegistry:
    reg = JudgeRegistry()
    reg.register_kind("scripted", ScriptedJudge)
    for name, table in answers.items():
        reg.register_profile(
            JudgeProfile(id=f"{name}@1", kind="scripted", params={"answers": table})
        )
    return reg


def test_evaluate_end_to_end_with_plugin_judges() -> None:
    task = bundled_registry().get("pelican-bicycle-structured@1")
    every = {c.id: "pass" for c in task.criteria}
    reg = scripted_registry(
        good=every, dissent={**every, "R2": "fail"}, broken={"R3": "boom", "B1": "error"}
    )
    panel = JudgePanel("test-panel@1", task.family, {"*": ("good@1", "dissent@1", "broken@1")})
    calibrated = {("good@1", c.id, task.family): True for c in task.criteria}
    calibrated[("dissent@1", "R2", task.family)] = True
    result = evaluate(task, [], [], {}, {}, panel, calibrated, judge_registry=reg)
    by = {c.criterion: c for c in result.criteria}
    assert by["A"].status == "not_applicable"  # applicable: false in the task
    assert by["R1"].status == "pass"
    assert (by["R2"].status, by["R2"].review_reason) == ("uncertain", "judges_disagree")
    assert by["R3"].status == "pass"  # broken@1 is not eligible: its crash is only recorded
    causes = {(f.criterion, f.cause) for f in result.failures}
    assert causes == {("R3", "judge_crashed"), ("B1", "api_unreachable")}
    assert (result.outcome.status, result.outcome.reasons) == ("pending", ("R2: judges_disagree",))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["panel"]["id"] == "test-panel@1" and len(data["panel"]["content_hash"]) == 64
    # once a human reviews R2, the outcome is decided
    human = human_verdict("R2", "pass", "both feet on the pedals")
    again = evaluate(
        task, [], [], {}, {}, panel, calibrated, judge_registry=reg, human_verdicts=[human]
    )
    assert again.outcome.status == "pass"
    assert again.criterion("R2").votes[0].judge_profile_id == "human@1"


def test_evaluate_without_calibration_is_pending_no_reliable_judge() -> None:
    task = bundled_registry().get("pelican-bicycle-structured@1")
    reg = scripted_registry(good={c.id: "pass" for c in task.criteria})
    panel = JudgePanel("test-panel@1", task.family, {"*": ("good@1",)})
    result = evaluate(task, [], [], {}, {}, panel, None, judge_registry=reg)
    assert result.outcome.status == "pending"
    assert all(r.endswith("no_reliable_judge") for r in result.outcome.reasons)
    assert len(result.verdicts) == len([c for c in task.criteria if c.applicable])


@pytest.mark.parametrize("status", ["pass", "fail"])
def test_eligible_judge_error_gives_incomplete_outcome(status: str) -> None:
    task = bundled_registry().get("pelican-bicycle-structured@1")
    table = {c.id: status for c in task.criteria}
    reg = scripted_registry(good=table, down={"R1": "error"})
    panel = JudgePanel("test-panel@1", task.family, {"*": ("good@1", "down@1")})
    result = evaluate(task, [], [], {}, {}, panel, lambda p, c, f: True, judge_registry=reg)
    expected = "incomplete" if status == "pass" else "fail"
    assert result.outcome.status == expected
    if expected == "incomplete":
        assert result.outcome.cause == "R1: down@1: api_unreachable"
