"""The reliability gate: a lax judge with high accuracy is still rejected for missed criticals."""

from __future__ import annotations

import json

from judges.calibration.gate import (
    DEFAULT_GATE,
    GateConfig,
    GateDecision,
    GateThresholds,
    decide,
    eligibility_table,
)
from judges.calibration.runner import run_calibration
from judges.calibration.sets import CalibrationItem, CalibrationSet, Label, make_split
from judges.model import Evidence, JudgeProfile, Verdict, VerdictStatus

T = "pelican-bicycle-structured@1"


def _set(n_pass: int, n_fail: int, n_na: int = 0) -> CalibrationSet:
    """R2 items: mostly human passes, a few human fails; one group per item."""
    statuses = ["pass"] * n_pass + ["fail"] * n_fail
    items = [
        CalibrationItem(f"r2-{i}", f"{i:064x}", "R2", T, group=f"g{i}")
        for i in range(len(statuses))
    ]
    items += [
        CalibrationItem(f"a-{i}", f"{i:064x}", "A", T, "necessary", group=f"h{i}")
        for i in range(n_na)
    ]
    labels = [Label(it.item_id, "ann", s, "t") for it, s in zip(items, statuses, strict=False)]
    labels += [Label(f"a-{i}", "ann", "not_applicable", "t") for i in range(n_na)]
    s = CalibrationSet("lax@1", T, tuple(items), tuple(labels))
    split = make_split(items, seed=0, held_out_fraction=0.5, unit="item")
    # for this test the whole set is held out: make the tuning side a single item
    held = tuple(i.item_id for i in items[1:])
    return s.with_split(split.__class__(0, 0.5, "item", (items[0].item_id,), held))


LAX = JudgeProfile(
    "geometry-lax@1", "geometry", params={"pass_max": 10.0}, description="passes all"
)


def test_pass_everything_profile_is_rejected_despite_high_accuracy() -> None:
    s = _set(n_pass=96, n_fail=5)

    def lax(item: CalibrationItem, _repeat: int) -> Verdict:
        return Verdict(item.criterion, VerdictStatus.PASS, Evidence(None, None, "ok"), LAX.id)

    run = run_calibration("geometry", LAX, s, lax, repeats=1, n_boot=300, clock=lambda: "T0")
    m = run.per_criterion["R2"]
    assert m.accuracy.value is not None and m.accuracy.value >= 0.95  # plain accuracy is high
    d = run.decision("R2")
    assert not d.passed
    assert any("missed-critical-error rate 1.000 (5/5)" in r for r in d.reasons)
    assert d.thresholds["max_missed_critical_rate"] == 0.05
    assert d.profile_id == LAX.id and d.set_id == "lax@1" and d.task_family == "pelican-bicycle"
    assert run.profile_hash == LAX.content_hash()


def test_mostly_pass_judge_passes_f1_but_fails_on_missed_criticals() -> None:
    s = _set(n_pass=90, n_fail=11)
    fails = [i.item_id for i in s.part("held_out") if s.reference(i.item_id).status == "fail"]
    caught = set(fails[:4])

    def mostly(item: CalibrationItem, _repeat: int) -> str:
        return "fail" if item.item_id in caught else "pass"

    run = run_calibration("geometry", "geometry-mostly@1", s, mostly, repeats=1, n_boot=300)
    m = run.per_criterion["R2"]
    assert m.macro_f1.value is not None and m.macro_f1.value > 0.5
    assert m.accuracy.value is not None and m.accuracy.value > 0.9
    d = run.decision("R2")
    assert not d.passed
    assert d.status == "not_trusted"
    assert d.reasons[0].startswith("missed-critical-error rate 0.636 (7/11)")


def test_a_good_judge_passes_and_thresholds_are_configuration() -> None:
    s = _set(n_pass=40, n_fail=10)

    def oracle(item: CalibrationItem, _repeat: int) -> str:
        return s.reference(item.item_id).status or "uncertain"

    run = run_calibration("geometry", "geometry-good@1", s, oracle, n_boot=200, clock=lambda: "T1")
    assert run.decision("R2").passed and run.decision("R2").reasons == ("all thresholds met",)
    strict = GateConfig("strict@1", per_criterion={"R2": GateThresholds(min_critical_items=50)})
    run2 = run_calibration("geometry", "geometry-good@1", s, oracle, n_boot=200, gate=strict)
    d = run2.decision("R2")
    assert not d.passed and "cannot be measured" in d.reasons[0]
    assert d.gate_id == "strict@1" and d.thresholds["min_critical_items"] == 50
    assert GateConfig.from_dict(json.loads(json.dumps(strict.to_dict()))) == strict


def test_upper_bound_option_and_decision_records() -> None:
    s = _set(n_pass=20, n_fail=4)
    run = run_calibration(
        "g", "g@1", s, lambda i, _r: s.reference(i.item_id).status or "pass", n_boot=200
    )
    m = run.per_criterion["R2"]
    loose = decide(
        profile_id="g@1",
        criterion="R2",
        task_family="f",
        metrics=m,
        config=DEFAULT_GATE,
        set_id="x",
        split_seed=1,
        decided_at="2026-01-01",
    )
    assert loose.passed
    back = GateDecision.from_dict(json.loads(json.dumps(loose.to_dict())))
    assert back == loose
    later = GateDecision(
        **{**loose.__dict__, "passed": False, "status": "not_trusted", "decided_at": "2026-02-01"}
    )
    table = eligibility_table([later, loose])
    assert table == {("g@1", "R2", "f"): False}


def test_no_critical_items_means_no_vote() -> None:
    s = _set(n_pass=10, n_fail=0)
    run = run_calibration("g", "g@1", s, lambda _i, _r: "pass", n_boot=100)
    d = run.decision("R2")
    assert not d.passed
    assert any("cannot be measured" in r for r in d.reasons)


def test_cautious_rule_uses_the_upper_bound_on_small_sets() -> None:
    s = _set(n_pass=30, n_fail=6)

    def oracle(item: CalibrationItem, _repeat: int) -> str:
        return s.reference(item.item_id).status or "uncertain"

    cautious = GateConfig("cautious@1", default=GateThresholds(use_upper_bound=True))
    run = run_calibration("g", "g@1", s, oracle, n_boot=200, gate=cautious)
    d = run.decision("R2")
    mc = run.per_criterion["R2"].missed_critical
    assert (mc.value, mc.ci_high) == (0.0, 0.0) and mc.wilson_high is not None
    assert not d.passed and "upper 95% bound" in d.reasons[0]
    assert run_calibration("g", "g@1", s, oracle, n_boot=200).decision("R2").passed
