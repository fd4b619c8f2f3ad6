"""Automatic adjudication and the graded jury, with plugin judges (no model behind them).

A strict / balanced / lenient trio that disagrees (fail / uncertain / pass) on a criterion: a
trusted adjudicator decides it; an untrusted, uncertain or failing one leaves it to a person.
What the adjudicator is shown names no judge. Levels two apart disagree; one apart agree at the
lower median.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import pytest

from judges import (
    CheckSummary,
    EvalInput,
    Evidence,
    JudgeAnswers,
    JudgeFailure,
    JudgeInput,
    JudgePanel,
    JudgeProfile,
    JudgeRegistry,
    PanelResult,
    RenderSummary,
    Verdict,
    VerdictStatus,
    evaluate,
)
from judges.adjudication_record import Adjudication, AdjudicatorReply, PeerAnswer
from judges.profiles import PanelDoc, build_panel
from regua.errors import ConfigurationError
from regua.settings import Settings
from tasks import Criterion, TaskSpec, bundled_registry

PELICAN = bundled_registry().get("pelican-bicycle-structured@2")
GRADED = bundled_registry().get("lighthouse-night-graded@1")


class Said:
    """A plugin judge: ``params.says`` maps criterion → status, or level on graded criteria.

    With ``params.adjudicates`` it implements ``adjudicate`` and keeps what it was shown.
    """

    shown: ClassVar[list[tuple[str, tuple[PeerAnswer, ...]]]] = []

    def __init__(self, profile: JudgeProfile, settings: Settings | None) -> None:
        del settings
        self.profile = profile
        self.says: Mapping[str, object] = profile.params["says"]

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        del task
        return criterion.id in self.says or "*" in self.says

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure:
        said = self.says.get(inp.criterion.id, self.says.get("*"))
        if said == "error":
            return JudgeFailure(inp.criterion.id, self.profile.id, "api_error", "HTTP 500")
        ev = Evidence("frame-0.png", 0.0, f"{self.profile.params['stance']} sees {said}")
        if inp.criterion.graded:
            level = None if said is None else int(str(said))
            status = (
                "uncertain" if level is None else inp.task.level_status(inp.criterion.id, level)
            )
            return Verdict(
                inp.criterion.id, VerdictStatus(status), ev, self.profile.id, level=level
            )
        return Verdict(inp.criterion.id, VerdictStatus(str(said)), ev, self.profile.id)


class Adjudicator(Said):
    """A plugin judge that can adjudicate: it records the anonymous answers it is shown."""

    def adjudicate(self, inp: JudgeInput, answers: Sequence[PeerAnswer]) -> AdjudicatorReply:
        Said.shown.append((inp.criterion.id, tuple(answers)))
        prompt = "\n".join(f"{a.status}: {a.evidence}" for a in answers)
        return AdjudicatorReply(self.judge(inp), prompt, "test-adjudication@1")


def registry(adjudicator_says: Mapping[str, object]) -> JudgeRegistry:
    reg = JudgeRegistry()
    reg.register_kind("said", Said)
    reg.register_kind("adjudicating", Adjudicator)
    for stance, says in (
        ("strict", {"*": "fail", "P": 1}),
        ("balanced", {"*": "uncertain", "P": 3}),
        ("lenient", {"*": "pass", "P": 5}),
    ):
        reg.register_profile(
            JudgeProfile(f"{stance}@1", "said", params={"says": says, "stance": stance})
        )
    reg.register_profile(
        JudgeProfile(
            "referee@1", "adjudicating", params={"says": adjudicator_says, "stance": "referee"}
        )
    )
    return reg


def trio(task: TaskSpec, criterion: str, **extra: object) -> JudgePanel:
    return JudgePanel(
        f"trio-{criterion}@1",
        task.family,
        {criterion: ("strict@1", "balanced@1", "lenient@1")},
        adjudicator="referee@1",
        **extra,  # type: ignore[arg-type]
    )


def run(
    task: TaskSpec,
    panel: JudgePanel,
    adjudicator_says: Mapping[str, object],
    *,
    referee_trusted: bool = True,
    answers: JudgeAnswers | None = None,
) -> PanelResult:
    trusted = {
        (f"{s}@1", c.id, task.family): True
        for s in ("strict", "balanced", "lenient")
        for c in task.criteria
    }
    for c in task.criteria:
        trusted[("referee@1", c.id, task.family)] = referee_trusted
    inp = EvalInput(task, CheckSummary("pass", True), RenderSummary(status="ok"))
    return evaluate(inp, panel, trusted, judge_registry=registry(adjudicator_says), answers=answers)


def test_a_trusted_adjudicator_decides_what_the_trio_disputes() -> None:
    Said.shown.clear()
    result = run(PELICAN, trio(PELICAN, "R1"), {"R1": "pass"})
    r1 = result.criterion("R1")
    assert (r1.status, r1.review_required, r1.review_reason) == ("pass", False, None)
    assert r1.disagreement is not None and "strict@1=fail" in r1.disagreement  # kept
    (adj,) = result.adjudications
    assert (adj.criterion, adj.result, adj.trusted, adj.adjudicator_id) == (
        "R1",
        "decided",
        True,
        "referee@1",
    )
    assert adj.reason.startswith("judges disagree (rule split)")
    assert adj.verdict is not None and adj.verdict.status == "pass"
    assert adj.prompt is not None and adj.prompt_version == "test-adjudication@1"
    # shown: the three answers, anonymous, in an order of their content alone
    ((criterion, shown),) = Said.shown
    assert criterion == "R1" and [a.status for a in shown] == ["fail", "pass", "uncertain"]
    assert all("@1" not in a.evidence for a in shown)
    assert "R1: " not in " ".join(result.outcome.reasons)
    assert Adjudication.from_dict(adj.to_dict()) == adj


@pytest.mark.parametrize(
    ("says", "trusted", "result", "reason"),
    [
        ({"R1": "pass"}, False, "adjudicator_not_trusted", "adjudicator_not_trusted"),
        ({"R1": "uncertain"}, True, "adjudicator_uncertain", "adjudicator_uncertain"),
        ({"R1": "error"}, True, "adjudicator_failed", "adjudicator_failed"),
    ],
)
def test_a_person_decides_when_the_adjudicator_cannot(
    says: Mapping[str, object], trusted: bool, result: str, reason: str
) -> None:
    outcome = run(PELICAN, trio(PELICAN, "R1"), says, referee_trusted=trusted)
    r1 = outcome.criterion("R1")
    assert (r1.status, r1.review_required, r1.review_reason) == ("uncertain", True, reason)
    assert outcome.adjudications[0].result == result
    assert outcome.outcome.status == "pending"
    assert f"R1: {reason}" in outcome.outcome.reasons


def test_no_adjudication_without_disagreement_or_without_an_adjudicator() -> None:
    agree = JudgePanel("agree@1", PELICAN.family, {"R1": ("lenient@1",)}, adjudicator="referee@1")
    assert run(PELICAN, agree, {"R1": "fail"}).adjudications == ()
    plain = JudgePanel("plain@1", PELICAN.family, {"R1": ("strict@1", "balanced@1", "lenient@1")})
    result = run(PELICAN, plain, {"R1": "pass"})
    assert result.adjudications == ()
    assert result.criterion("R1").review_reason == "judges_disagree"  # as before adjudicators


def test_the_panel_rule_any_fail_vs_pass_also_settles_a_fail_majority() -> None:
    reg_panel = JudgePanel(
        "two-fail@1",
        PELICAN.family,
        {"R1": ("strict@1", "strict@1", "lenient@1")},
        adjudicator="referee@1",
    )
    split = run(PELICAN, reg_panel, {"R1": "pass"})
    assert split.criterion("R1").status == "fail" and split.adjudications == ()
    strict_rule = JudgePanel(
        "two-fail@2",
        PELICAN.family,
        {"R1": ("strict@1", "strict@1", "lenient@1")},
        adjudicator="referee@1",
        disagreement="any_fail_vs_pass",
    )
    settled = run(PELICAN, strict_rule, {"R1": "pass"})
    assert settled.criterion("R1").status == "pass"
    assert settled.adjudications[0].reason.startswith("judges disagree (rule any_fail_vs_pass)")
    assert strict_rule.content_hash() != reg_panel.content_hash()


def test_reused_answers_reuse_the_adjudication_and_read_it_under_todays_gate() -> None:
    first = run(PELICAN, trio(PELICAN, "R1"), {"R1": "pass"})
    answers = JudgeAnswers(first.verdicts, first.failures, first.adjudications)
    Said.shown.clear()
    again = run(PELICAN, trio(PELICAN, "R1"), {"R1": "fail"}, answers=answers)
    assert Said.shown == []  # never asked again
    assert again.criterion("R1").status == "pass"
    distrusted = run(
        PELICAN, trio(PELICAN, "R1"), {"R1": "fail"}, answers=answers, referee_trusted=False
    )
    assert distrusted.criterion("R1").review_reason == "adjudicator_not_trusted"


def test_graded_levels_two_apart_disagree_and_the_adjudicator_gives_the_level() -> None:
    panel = JudgePanel(
        "graded-trio@1", GRADED.family, {"P": ("strict@1", "lenient@1")}, adjudicator="referee@1"
    )
    result = run(GRADED, panel, {"P": 4})
    p = result.criterion("P")
    assert (p.status, p.level) == ("pass", 4)
    (adj,) = result.adjudications
    assert [a.level for a in adj.answers] == [1, 5]
    assert "strict@1=1; lenient@1=5" in (p.disagreement or "")


@pytest.mark.parametrize(
    ("levels", "spread", "expected"),
    [
        ((4, 5), 1.5, ("pass", 4, None)),  # one apart: agreement, the lower median
        ((3, 5), 1.5, ("uncertain", None, "judges_disagree")),  # two apart
        ((4, 2), 2.0, ("fail", 2, None)),  # a wider limit declared by the panel
        ((4, 4, 5), 1.5, ("pass", 4, None)),
        ((3, 4, 3), 1.5, ("fail", 3, None)),  # below the minimum P >= 4
    ],
)
def test_graded_jury_spread_and_lower_median(
    levels: tuple[int, ...], spread: float, expected: tuple[str, int | None, str | None]
) -> None:
    reg = JudgeRegistry()
    reg.register_kind("said", Said)
    ids = []
    for n, level in enumerate(levels):
        pid = f"g{n}@1"
        ids.append(pid)
        reg.register_profile(
            JudgeProfile(pid, "said", params={"says": {"P": level}, "stance": pid})
        )
    panel = JudgePanel("levels@1", GRADED.family, {"P": tuple(ids)}, max_level_spread=spread)
    every = {(pid, "P", GRADED.family): True for pid in ids}
    inp = EvalInput(GRADED, CheckSummary("pass", True), RenderSummary(status="ok"))
    p = evaluate(inp, panel, every, judge_registry=reg).criterion("P")
    assert (p.status, p.level, p.review_reason) == expected


def test_judge_files_declare_the_adjudicator_and_refuse_an_unknown_one() -> None:
    doc = PanelDoc(
        id="pelican-trio@1",
        family="pelican-bicycle",
        assignments={"*": ["static@1"]},
        adjudicator="vision-llm-openai@1",
        disagreement="any_fail_vs_pass",
        max_level_spread=1.0,
    )
    panel = build_panel(doc, "trio.yaml", ["static@1", "vision-llm-openai@1"])
    assert panel.adjudicator == "vision-llm-openai@1"
    assert "vision-llm-openai@1" in panel.profile_ids()
    assert panel.to_dict()["adjudicator"] == "vision-llm-openai@1"
    bad = doc.model_copy(update={"adjudicator": "nobody@1"})
    with pytest.raises(ConfigurationError, match="adjudicator: unknown judge profile 'nobody@1'"):
        build_panel(bad, "trio.yaml", ["static@1"])
