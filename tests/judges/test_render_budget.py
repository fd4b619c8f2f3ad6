"""The declared rule "exceeds the render budget" lives in the jury (issue 14, item 8).

A stored render log with status ``over_budget`` is read as such, breaks the rule
``render_budget`` (:func:`judges.jury.broken_rules`), fails F1 through the static judge with the
log's detail as evidence, and :func:`judges.jury.decide_outcome` fails the run with the reason
"exceeds the render budget" even when a machinery failure is also reported. An ``incomplete``
render breaks no rule.
"""

from __future__ import annotations

from judges import CheckSummary, JudgeInput, RenderSummary, Verdict, create_judge
from judges.jury import RENDER_BUDGET_RULE, broken_rules, decide_outcome
from judges.model import VerdictStatus
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@1")
PASSING = CheckSummary.from_doc({"status": "pass", "checks": []})
LOG = {
    "status": "over_budget",
    "cause": "render_timeout",
    "detail": "exceeds the render budget: the render ran past its deadline of 25 s",
}


def test_over_budget_is_read_and_breaks_the_declared_rule() -> None:
    render = RenderSummary.from_doc(LOG)
    assert render.status == "over_budget" and render.cause == "render_timeout"
    assert broken_rules(PASSING, render) == (RENDER_BUDGET_RULE,)
    assert broken_rules(PASSING, RenderSummary("incomplete", "crash")) == ()
    no_svg = CheckSummary.from_doc({"status": "fail", "extraction": {"status": "no_svg"}})
    assert broken_rules(no_svg, RenderSummary()) == ("no_svg",)


def test_the_outcome_fails_with_the_reason_whatever_else_happened() -> None:
    outcome = decide_outcome(
        (), broken_rules=(RENDER_BUDGET_RULE,), machinery_failure="render_incomplete: x"
    )
    assert (outcome.status, outcome.reasons) == ("fail", ("exceeds the render budget",))


def test_the_static_judge_fails_f1_with_the_logs_detail() -> None:
    crit = TASK.criterion("F1")
    render = RenderSummary.from_doc(LOG)
    verdict = create_judge("static@1").judge(JudgeInput(TASK, crit, (), (), PASSING, render))
    assert isinstance(verdict, Verdict) and verdict.status is VerdictStatus.FAIL
    assert verdict.evidence.description == LOG["detail"]
