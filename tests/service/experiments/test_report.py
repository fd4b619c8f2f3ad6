"""The report builder and page over plain cases (no database), against hand figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.experiments.history import build_history
from service.experiments.html import render_experiment_html
from service.experiments.plan import Plan, PlanArm
from service.experiments.report import build_experiment_report
from service.experiments.spec import ModelParams
from service.experiments.store import CaseView

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def arm(name: str) -> PlanArm:
    return PlanArm(
        name=name,
        model=ModelParams(api="mock", model=f"m-{name}"),
        prompt_variant=None,
        prompt_template=None,
        refs={"i1": "t1@1", "i2": "t2@1"},
    )


def case(a: str, item: str, r: int, outcome: str, ms: float, usd: float | None) -> CaseView:
    t = T0 + timedelta(seconds=r)
    return CaseView(
        a, item, r, f"t{item[1]}@1", f"{a}{item}{r}", outcome, ms, usd, False, "ab", t, None
    )


PLAN = Plan(items=["i1", "i2"], repeats=2, seed=1, panel=None, arms=[arm("a"), arm("b")])
CASES = [
    case("a", "i1", 0, "pass", 10, 0.5),
    case("a", "i1", 1, "pass", 20, 0.5),
    case("a", "i2", 0, "pass", 30, 0.5),
    case("a", "i2", 1, "pending", 40, 0.5),
    case("b", "i1", 0, "fail", 5, None),
    case("b", "i1", 1, "pass", 6, 0.1),
    case("b", "i2", 0, "fail", 7, 0.1),
]
META = {"id": "x@w", "name": "x", "window": "w", "status": "evaluating", "regua_version": "0"}


def test_report_of_a_small_experiment_matches_the_hand_figures() -> None:
    judging = {
        "panels": [{"id": "static-only@1", "content_hash": "h"}],
        "judges": {"static@1": "j"},
    }
    r = build_experiment_report(META, PLAN, CASES, judging)
    a, b = r["arms"]
    assert a["counts"] == {"pass": 3, "fail": 0, "pending": 1, "incomplete": 0, "running": 0}
    assert a["pass_rate"] == pytest.approx(3 / 4)
    assert a["generation_cost"]["per_pass_usd"] == pytest.approx(2.0 / 3)
    # no judging costs given: never taken as zero
    assert a["judging_cost"]["per_pass_usd"] is None and a["judging_cost"]["unknown"] == 4
    assert a["total_cost"]["per_pass_usd"] is None
    assert (a["latency"]["p50_ms"], a["latency"]["p95_ms"]) == (20.0, 40.0)
    assert b["cases"] == 3 and b["planned"] == 4  # one case of b not generated yet
    assert b["generation_cost"]["per_pass_usd"] is None and b["generation_cost"]["unknown"] == 1
    assert a["consistency"]["always_right"] == ["i1"] and b["consistency"]["unstable"] == ["i1"]
    (cmp,) = r["comparisons"]
    # (i1,0) pass/fail only a; (i1,1) both pass; (i2,0) pass/fail only a; (i2,1) pending/missing
    assert cmp["table"] == {
        "both_pass": 1,
        "only_a": 2,
        "only_b": 0,
        "both_fail": 0,
        "undecided": 1,
    }
    assert cmp["mcnemar_p"] == pytest.approx(0.5)
    assert cmp["difference"]["point"] == pytest.approx((3 - 1) / 4)
    assert r["reproducibility"]["time_window"]["first_generation"] == T0.isoformat()
    page = render_experiment_html(r)
    assert page.count("<svg") == 3 and "m-a" in page and "Exact McNemar p = 0.5" in page


def test_history_keeps_versions_apart_and_reports_drift() -> None:
    def window(w: str, ref: str, rate: float) -> dict[str, object]:
        arm = {
            "arm": "a",
            "model": {"model": "m"},
            "task_versions": {"i": ref},
            "panels": ["p#1"],
            "pass_rate": rate,
            "cases": 10,
        }
        return {"window": w, "experiment_id": f"x@{w}", "created_at": w, "arms": [arm]}

    h = build_history(
        "x", [window("d1", "t@1", 0.5), window("d2", "t@1", 0.7), window("d3", "t@2", 0.2)]
    )
    old, new = h["series"]
    assert [p["window"] for p in old["points"]] == ["d1", "d2"]
    assert old["drift"] == pytest.approx(0.2)
    assert [p["window"] for p in new["points"]] == ["d3"] and new["drift"] is None
    assert new["task_versions"] == ["t@2"]


def test_judging_cost_and_total_per_pass_come_from_each_cases_evaluation() -> None:
    cases = [
        CaseView("a", "i1", 0, "t1@1", "r1", "pass", 1, 0.5, False, "ab", T0, 11),
        CaseView("a", "i1", 1, "t1@1", "r2", "fail", 1, 0.25, False, "ab", T0, 12),
        CaseView("a", "i2", 0, "t2@1", "r3", "pass", 1, 0.25, False, "ab", T0, 13),
        CaseView("a", "i2", 1, "t2@1", "r4", "running", 1, 0.5, False, "ab", T0, None),
        CaseView("b", "i1", 0, "t1@1", "r5", "pass", 1, 0.5, False, "ab", T0, 15),
    ]
    costs = {11: 0.01, 12: 0.02, 13: 0.03, 15: None}  # 15: a judge call without a price
    r = build_experiment_report(META, PLAN, cases, {"costs": costs})
    a, b = r["arms"]
    assert a["judging_cost"]["total_usd"] == pytest.approx(0.06)  # the running case: nothing yet
    assert a["judging_cost"]["per_pass_usd"] == pytest.approx(0.06 / 2)
    assert a["generation_cost"]["per_pass_usd"] == pytest.approx(1.5 / 2)
    assert a["total_cost"]["per_pass_usd"] == pytest.approx((1.5 + 0.06) / 2)
    assert b["judging_cost"]["per_pass_usd"] is None and b["judging_cost"]["unknown"] == 1
    assert b["total_cost"]["per_pass_usd"] is None
    assert b["generation_cost"]["per_pass_usd"] == pytest.approx(0.5)
    page = render_experiment_html(r)
    assert "judging cost / pass" in page and "total cost / pass" in page
    assert "$0.0300" in page and "not available" in page


def test_a_judge_model_change_starts_a_series_and_points_carry_counts() -> None:
    counts = {"pass": 3, "fail": 4, "pending": 2, "incomplete": 1, "running": 0}

    def window(w: str, voter: str, rate: float) -> dict[str, object]:
        arm = {
            "arm": "a",
            "model": {"model": "m"},
            "task_versions": {"i": "t@1"},
            "panels": ["p#1"],
            "voting_judges": [voter, "static-rules@1#abc"],
            "pass_rate": rate,
            "counts": counts,
            "cases": 10,
        }
        return {"window": w, "experiment_id": f"x@{w}", "created_at": w, "arms": [arm]}

    seeing = "vision-llm-openai+seeing-1@1#111111111111"
    other = "vision-llm-openai+other-2@1#222222222222"
    h = build_history(
        "x", [window("d1", seeing, 0.3), window("d2", seeing, 0.4), window("d3", other, 0.0)]
    )
    first, second = h["series"]
    assert first["voting_judges"] == sorted([seeing, "static-rules@1#abc"])
    assert [p["window"] for p in first["points"]] == ["d1", "d2"]
    assert first["drift"] == pytest.approx(0.1)
    assert [p["window"] for p in second["points"]] == ["d3"] and second["drift"] is None
    assert other in second["voting_judges"]
    assert first["points"][0]["counts"] == counts
