"""``judges.evaluate`` end to end with plugin judges: the jury and the outcome rule applied."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from judges import (
    JUDGE_FAILURE,
    CheckEvidence,
    CheckFinding,
    CheckSummary,
    EvalInput,
    Evidence,
    JudgeFailure,
    JudgeInput,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    PanelRecord,
    RenderSummary,
    Verdict,
    VerdictStatus,
    evaluate,
    human_verdict,
)
from regua.settings import Settings
from tasks import Criterion, TaskSpec, bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@1")
CLEAN_CHECKS = CheckSummary(status="pass", svg_found=True)
CLEAN_RENDER = RenderSummary(status="ok")


def clean_input(task: TaskSpec = TASK, render: RenderSummary = CLEAN_RENDER) -> EvalInput:
    """A run whose checks passed and whose render finished (the judges decide the rest)."""
    return EvalInput(task, CLEAN_CHECKS, render)


def every_judge(_profile: JudgeProfile, _criterion: str, _family: str) -> bool:
    return True


class ScriptedJudge:
    """A plugin judge whose answers are fixed per criterion."""

    def __init__(self, profile: JudgeProfile, settings: Settings | None) -> None:
        del settings  # JudgeFactory signature; scripted answers need no settings
        self.profile = profile
        self.answers_ = dict(profile.params["answers"])

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        del task  # Judge protocol; the script is keyed by criterion only
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
    every = {c.id: "pass" for c in TASK.criteria}
    reg = scripted_registry(
        good=every, dissent={**every, "R2": "fail"}, broken={"R3": "boom", "B1": "error"}
    )
    panel = JudgePanel("test-panel@1", TASK.family, {"*": ("good@1", "dissent@1", "broken@1")})
    calibrated = {("good@1", c.id, TASK.family): True for c in TASK.criteria}
    calibrated[("dissent@1", "R2", TASK.family)] = True
    result = evaluate(clean_input(), panel, calibrated, judge_registry=reg)
    by = {c.criterion: c for c in result.criteria}
    assert by["A"].status == "not_applicable"  # applicable: false in the task
    assert by["R1"].status == "pass"
    assert (by["R2"].status, by["R2"].review_reason) == ("uncertain", "judges_disagree")
    assert by["R3"].status == "pass"  # broken@1 is not eligible: its crash is only recorded
    causes = {(f.criterion, f.cause) for f in result.failures}
    assert causes == {("R3", "judge_crashed"), ("B1", "api_unreachable")}
    assert (result.outcome.status, result.outcome.reasons) == ("pending", ("R2: judges_disagree",))
    assert isinstance(result.panel, PanelRecord)
    assert {j.id for j in result.panel.judges} == {"good@1", "dissent@1", "broken@1"}
    data = json.loads(json.dumps(result.to_dict()))
    assert data["panel"]["id"] == "test-panel@1" and len(data["panel"]["content_hash"]) == 64
    assert {j["registered_id"] for j in data["panel"]["judges"]} == {
        "good@1",
        "dissent@1",
        "broken@1",
    }
    assert PanelRecord.from_dict(data["panel"]) == result.panel
    # once a human reviews R2, the outcome is decided
    human = human_verdict("R2", "pass", "both feet on the pedals")
    again = evaluate(clean_input(), panel, calibrated, [human], judge_registry=reg)
    assert again.outcome.status == "pass"
    assert again.criterion("R2").votes[0].judge_profile_id == "human@1"


def test_evaluate_without_calibration_is_pending_no_reliable_judge() -> None:
    reg = scripted_registry(good={c.id: "pass" for c in TASK.criteria})
    panel = JudgePanel("test-panel@1", TASK.family, {"*": ("good@1",)})
    result = evaluate(clean_input(), panel, None, judge_registry=reg)
    assert result.outcome.status == "pending"
    assert all(r.endswith("no_reliable_judge") for r in result.outcome.reasons)
    assert len(result.verdicts) == len([c for c in TASK.criteria if c.applicable])


@pytest.mark.parametrize("status", ["pass", "fail"])
def test_eligible_judge_failure_leaves_review_unless_the_work_failed(status: str) -> None:
    table = {c.id: status for c in TASK.criteria}
    reg = scripted_registry(good=table, down={"R1": "error"})
    panel = JudgePanel("test-panel@1", TASK.family, {"*": ("good@1", "down@1")})
    result = evaluate(clean_input(), panel, every_judge, judge_registry=reg)
    r1 = result.criterion("R1")
    if status == "pass":
        assert (r1.status, r1.review_reason) == ("uncertain", JUDGE_FAILURE)
        assert r1.cause == "down@1: api_unreachable"
        assert (result.outcome.status, result.outcome.reasons) == (
            "pending",
            ("R1: judge_failure",),
        )
        assert result.outcome.cause is None
    else:
        assert r1.status == "fail"
        assert result.outcome.status == "fail"
    # a render that broke is a machinery failure: incomplete, unless the work already failed
    crashed = RenderSummary(status="incomplete", cause="crash")
    broken = evaluate(clean_input(render=crashed), panel, every_judge, judge_registry=reg)
    assert clean_input(render=crashed).machinery_failure() == "render_incomplete: crash"
    if status == "pass":
        assert (broken.outcome.status, broken.outcome.cause) == (
            "incomplete",
            "render_incomplete: crash",
        )
    else:
        assert broken.outcome.status == "fail"


def test_checks_that_did_not_finish_make_the_outcome_incomplete() -> None:
    reg = scripted_registry(good={c.id: "pass" for c in TASK.criteria})
    panel = JudgePanel("test-panel@1", TASK.family, {"*": ("good@1",)})
    result = evaluate(EvalInput(TASK, None, CLEAN_RENDER), panel, every_judge, judge_registry=reg)
    assert result.outcome.status == "incomplete"
    assert result.outcome.cause is not None
    assert result.outcome.cause.startswith("checks_unavailable")


def test_failed_static_checks_fail_the_work_by_declared_rule() -> None:
    reg = scripted_registry(good={c.id: "pass" for c in TASK.criteria})
    panel = JudgePanel("test-panel@1", TASK.family, {"*": ("good@1",)})
    script = CheckFinding("script", "fail", (CheckEvidence("<script> element", 3),))
    checks = CheckSummary("fail", True, (CheckFinding("size", "pass"), script))
    result = evaluate(EvalInput(TASK, checks, CLEAN_RENDER), panel, every_judge, judge_registry=reg)
    assert all(c.status in ("pass", "not_applicable") for c in result.criteria)  # judges agree
    assert (result.outcome.status, result.outcome.reasons) == (
        "fail",
        ("static checks failed: script",),
    )
    no_svg = CheckSummary.from_doc({"status": "fail", "extraction": {"status": "no_svg"}})
    assert not no_svg.svg_found
    result = evaluate(EvalInput(TASK, no_svg), panel, every_judge, judge_registry=reg)
    assert result.outcome.status == "fail"
    assert result.outcome.reasons == ("static checks failed: no_svg",)
