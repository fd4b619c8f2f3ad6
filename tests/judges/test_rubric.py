"""Graded criteria and the weighted rubric: the worked example of issue 26, level by level.

The bundled example ``lighthouse-night-graded@1`` declares

    Q = 20 x (0.30 P + 0.25 I + 0.20 C + 0.10 L + 0.15 (5 - H))

and passes only when Q >= 80 and P >= 4 and I >= 4 and C >= 3 and H = 0 and the format check
(F1) passes and there is no critical failure (X1). Judges here are plugin judges answering fixed
levels (the vision judge's level prompt is tested against a fake model server elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from judges import (
    CheckSummary,
    EvalInput,
    Evidence,
    JudgeInput,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    PanelResult,
    RenderSummary,
    Verdict,
    VerdictStatus,
    evaluate,
    human_verdict,
)
from judges.rubric_score import RubricScore
from regua.settings import Settings
from tasks import Criterion, TaskSpec, bundled_registry

TASK = bundled_registry().get("lighthouse-night-graded@1")
GRADED = ("P", "I", "C", "L", "H")


class LevelJudge:
    """A plugin judge answering a fixed level per graded criterion, a status on the others."""

    def __init__(self, profile: JudgeProfile, settings: Settings | None) -> None:
        del settings  # JudgeFactory signature
        self.profile = profile
        self.table: Mapping[str, object] = profile.params["answers"]

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        del task
        return criterion.id in self.table

    def judge(self, inp: JudgeInput) -> Verdict:
        said = self.table[inp.criterion.id]
        ev = Evidence("frame-0.png", 0.0, f"scripted {said}")
        if inp.criterion.graded:
            level = None if said is None else int(str(said))
            status = (
                "uncertain" if level is None else inp.task.level_status(inp.criterion.id, level)
            )
            return Verdict(
                inp.criterion.id, VerdictStatus(status), ev, self.profile.id, level=level
            )
        return Verdict(inp.criterion.id, VerdictStatus(str(said)), ev, self.profile.id)


def judged(
    levels: Mapping[str, int | None],
    *,
    f1: str = "pass",
    x1: str = "pass",
    checks: CheckSummary | None = None,
) -> PanelResult:
    """One run of the worked example judged by one trusted level judge."""
    reg = JudgeRegistry()
    reg.register_kind("levels", LevelJudge)
    answers: dict[str, object] = {"F1": f1, "X1": x1, **levels}
    reg.register_profile(JudgeProfile(id="grader@1", kind="levels", params={"answers": answers}))
    panel = JudgePanel("graded-test@1", TASK.family, {"*": ("grader@1",)})
    trusted = {("grader@1", c.id, TASK.family): True for c in TASK.criteria}
    inp = EvalInput(TASK, checks or CheckSummary("pass", True), RenderSummary(status="ok"))
    return evaluate(inp, panel, trusted, judge_registry=reg)


def rubric_of(result: PanelResult) -> RubricScore:
    assert result.rubric is not None
    return result.rubric


def test_worked_example_q_83_with_every_minimum_met_passes() -> None:
    levels = {"P": 4, "I": 4, "C": 4, "L": 4, "H": 0}
    # Q = 20 x (0.30 x 4 + 0.25 x 4 + 0.20 x 4 + 0.10 x 4 + 0.15 x (5 - 0))
    #   = 20 x (1.20 + 1.00 + 0.80 + 0.40 + 0.75) = 20 x 4.15 = 83
    result = judged(levels)
    rubric = rubric_of(result)
    assert rubric.score == 83 and rubric.score_text == "83"
    assert rubric.arithmetic == (
        "Q = 20 x (0.30 x 4 + 0.25 x 4 + 0.20 x 4 + 0.10 x 4 + 0.15 x (5 - 0)) = 20 x 4.15 = 83"
    )
    assert rubric.threshold_met is True and rubric.threshold == 80
    assert {b.text: b.held for b in rubric.bounds} == {
        "P >= 4": True,
        "I >= 4": True,
        "C >= 3": True,
        "H = 0": True,
    }
    assert dict(rubric.levels) == levels
    assert {c.criterion: c.level for c in result.criteria if c.level is not None} == levels
    assert result.outcome.status == "pass"


def test_worked_example_i_3_scores_higher_and_still_fails_naming_the_minimum() -> None:
    levels = {"P": 5, "I": 3, "C": 4, "L": 4, "H": 0}
    # the same levels with I = 3 (and P one level higher, so Q does not drop):
    # Q = 20 x (0.30 x 5 + 0.25 x 3 + 0.20 x 4 + 0.10 x 4 + 0.15 x (5 - 0))
    #   = 20 x (1.50 + 0.75 + 0.80 + 0.40 + 0.75) = 20 x 4.2 = 84 >= 83
    result = judged(levels)
    rubric = rubric_of(result)
    assert rubric.score == 84 and rubric.score >= 83 and rubric.threshold_met is True
    assert [b.text for b in rubric.failed_bounds()] == ["I >= 4"]
    assert result.criterion("I").status == "fail" and result.criterion("I").level == 3
    assert result.outcome.status == "fail"
    assert result.outcome.reasons == ("I: level 3 fails the minimum I >= 4",)


def test_score_below_threshold_fails_with_every_bound_met() -> None:
    levels = {"P": 4, "I": 4, "C": 3, "L": 2, "H": 0}
    # 20 x (1.20 + 1.00 + 0.60 + 0.20 + 0.75) = 20 x 3.75 = 75 < 80
    result = judged(levels)
    assert rubric_of(result).score == 75 and rubric_of(result).threshold_met is False
    assert all(b.held for b in rubric_of(result).bounds)
    assert result.outcome.status == "fail" and result.outcome.reasons == ("Q = 75 < 80",)


def test_the_inverted_criterion_must_be_zero() -> None:
    result = judged({"P": 5, "I": 5, "C": 5, "L": 5, "H": 1})
    # 20 x (1.50 + 1.25 + 1.00 + 0.50 + 0.15 x 4) = 20 x 4.85 = 97, and still H = 0 fails
    assert rubric_of(result).score == 97
    assert result.outcome.status == "fail"
    assert result.outcome.reasons == ("H: level 1 fails the minimum H = 0",)


@pytest.mark.parametrize(
    ("f1", "x1", "reason"),
    [("fail", "pass", "F1: fail"), ("pass", "fail", "X1: fail")],
)
def test_format_check_and_critical_failure_decide_whatever_the_score(
    f1: str, x1: str, reason: str
) -> None:
    result = judged({"P": 5, "I": 5, "C": 5, "L": 5, "H": 0}, f1=f1, x1=x1)
    assert rubric_of(result).score == 100 and rubric_of(result).threshold_met
    assert result.outcome.status == "fail" and result.outcome.reasons == (reason,)


def test_a_level_nobody_could_give_leaves_the_score_unknown_and_the_run_pending() -> None:
    result = judged({"P": 4, "I": None, "C": 4, "L": 4, "H": 0})
    rubric = rubric_of(result)
    assert rubric.score is None and rubric.threshold_met is None and rubric.missing == ("I",)
    assert {b.text: b.held for b in rubric.bounds}["I >= 4"] is None
    assert result.criterion("I").status == "uncertain"
    assert result.outcome.status == "pending"  # uncertain never counts as a pass


def test_rubric_score_round_trips_as_stored() -> None:
    rubric = rubric_of(judged({"P": 4, "I": 4, "C": 4, "L": 4, "H": 0}))
    assert RubricScore.from_dict(rubric.to_dict()) == rubric


def test_a_task_without_rubric_has_no_score() -> None:
    pelican = bundled_registry().get("pelican-bicycle-structured@1")
    inp = EvalInput(pelican, CheckSummary("pass", True), RenderSummary(status="ok"))
    panel = JudgePanel("static-test@1", pelican.family, {"*": ("static@1",)})
    assert evaluate(inp, panel, None).rubric is None


def test_a_reviewers_pass_without_a_level_never_passes_the_rubric() -> None:
    reg = JudgeRegistry()
    reg.register_kind("levels", LevelJudge)
    answers: dict[str, object] = {"F1": "pass", "X1": "pass", "P": 4, "I": None, "C": 4, "L": 4}
    answers["H"] = 0
    reg.register_profile(JudgeProfile(id="grader@1", kind="levels", params={"answers": answers}))
    panel = JudgePanel("graded-test@1", TASK.family, {"*": ("grader@1",)})
    trusted = {("grader@1", c.id, TASK.family): True for c in TASK.criteria}
    inp = EvalInput(TASK, CheckSummary("pass", True), RenderSummary(status="ok"))
    said_pass = evaluate(
        inp, panel, trusted, [human_verdict("I", "pass", "looks fine")], judge_registry=reg
    )
    assert said_pass.criterion("I").status == "pass" and said_pass.criterion("I").level is None
    assert said_pass.outcome.status == "pending"  # the score is not known: never a pass
    assert said_pass.outcome.reasons == ("Q: no level for I",)
    said_fail = evaluate(
        inp, panel, trusted, [human_verdict("I", "fail", "no lamp room")], judge_registry=reg
    )
    assert said_fail.outcome.status == "fail" and said_fail.outcome.reasons == ("I: fail",)
