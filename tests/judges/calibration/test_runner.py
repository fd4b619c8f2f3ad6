"""run_calibration on the bundled set with plug-in verdict functions."""

from __future__ import annotations

import json
import math
from functools import cache

import pytest

from judges.calibration.bundled import Bundle, load_bundled_set
from judges.calibration.runner import CalibrationRun, run_calibration
from judges.calibration.sets import CalibrationItem
from judges.model import JudgeFailure
from judges.perturbation.svg_geometry import bbox, reference_diameter, require_bbox
from judges.perturbation.svgtree import parse_svg, require_id
from regua.errors import CalibrationError


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundled_set()


def test_only_the_held_out_split_is_read(bundle: Bundle) -> None:
    s = bundle.calibration_set
    assert s.split is not None
    called: set[str] = set()

    def judge(item: CalibrationItem, _repeat: int) -> str:
        called.add(item.item_id)
        return s.reference(item.item_id).status or "uncertain"

    run = run_calibration("oracle", "oracle@1", s, judge, repeats=1, n_boot=100, clock=lambda: "T")
    assert called == set(s.split.held_out)
    assert not called & set(s.split.tuning)
    assert all(d.passed for d in run.decisions)
    assert {d.criterion for d in run.decisions} == {"P1", "B1", "B2", "R1", "R2", "R3"}
    assert all(d.split_seed == s.split.seed and d.set_id == s.set_id for d in run.decisions)
    assert run.metrics.n_disputed >= 1  # disputed items are kept out, not given a gold label
    human_r2 = run.decision("R2").metrics["human_agreement"]
    assert human_r2["n_items"] > 0 and human_r2["agreement"]["value"] < 1.0  # borderline gaps


def test_run_round_trips_as_json(bundle: Bundle) -> None:
    s = bundle.calibration_set

    def judge(item: CalibrationItem, repeat: int) -> str | JudgeFailure:
        if item.item_id.endswith(":B1") and repeat == 1:
            return JudgeFailure(item.criterion, "j@1", "timeout", "slow")
        return "pass" if repeat == 0 or item.criterion != "P1" else "uncertain"

    run = run_calibration("j", "j@1", s, judge, repeats=2, n_boot=100, criteria=["B1", "P1"])
    assert {d.criterion for d in run.decisions} == {"B1", "P1"}
    b1 = run.per_criterion["B1"]
    assert b1.repeat_agreement.denominator == 0  # an error is not a disagreement, nor a repeat
    assert run.per_criterion["P1"].repeat_agreement.value == 0.0
    errors = [r for r in run.results if r.errors]
    assert errors and all(r.errors == ("timeout: slow",) for r in errors)
    text = json.dumps(run.to_dict())
    assert CalibrationRun.from_dict(json.loads(text)) == run


def test_refuses_empty_selection(bundle: Bundle) -> None:
    with pytest.raises(CalibrationError, match="no items"):
        run_calibration("j", "j@1", bundle.calibration_set, lambda _i, _r: "pass", criteria=["Z9"])
    with pytest.raises(CalibrationError, match="repeats"):
        run_calibration("j", "j@1", bundle.calibration_set, lambda _i, _r: "pass", repeats=0)


def test_invariance_violations_are_counted_per_pair(bundle: Bundle) -> None:
    s = bundle.calibration_set

    def mirror_blind(item: CalibrationItem, _repeat: int) -> str:
        if item.perturbation == "mirror@1":
            return "fail"
        return s.reference(item.item_id).status or "uncertain"

    run = run_calibration("j", "j@1", s, mirror_blind, repeats=1, n_boot=100)
    inv = run.metrics.invariance_violation
    mirrored = [i for i in s.part("held_out") if i.perturbation == "mirror@1"]
    assert inv.numerator == len(mirrored) and inv.denominator is not None
    assert inv.denominator > len(mirrored)
    assert run.metrics.false_reject.numerator == len(mirrored)


def test_a_bounding_box_judge_misses_hidden_contacts_and_is_rejected_on_r2(bundle: Bundle) -> None:
    """A judge that reads boxes from the SVG source cannot see clipping, hiding or occlusion."""
    s = bundle.calibration_set

    @cache
    def gap_ratio(sha: str) -> float:
        tree = parse_svg(bundle.artifacts[sha])
        d = reference_diameter(tree)
        gaps = []
        for side in ("left", "right"):
            foot = bbox(require_id(tree, f"foot-{side}"))  # None under display:none
            pedal = require_bbox(require_id(tree, f"pedal-{side}"))
            gaps.append(math.inf if foot is None else max(0.0, pedal.y0 - foot.y1) / d)
        return max(gaps)

    def boxes(item: CalibrationItem, _repeat: int) -> str:
        if item.criterion != "R2":
            return "not_applicable"
        g = gap_ratio(item.artifact_sha256)
        return "pass" if g <= 0.01 else "uncertain" if g <= 0.03 else "fail"

    run = run_calibration("boxes", "boxes@1", s, boxes, repeats=1, n_boot=300, criteria=["R2"])
    m = run.per_criterion["R2"]
    assert m.sensitivity.value is not None and 0 < m.sensitivity.value < 1
    # clip-path, opacity:0 and the occluder are invisible to boxes: 3 misses on each held-out base
    assert m.missed_critical.numerator == 6
    d = run.decision("R2")
    assert not d.passed and any("missed-critical" in r for r in d.reasons)
    assert m.invariance_violation.value == 0.0


def test_abstentions_and_the_prepare_hook(bundle: Bundle) -> None:
    s = bundle.calibration_set

    class Judge:
        def __init__(self) -> None:
            self.prepared: list[str] = []

        def prepare(self, items: list[CalibrationItem]) -> None:
            self.prepared += [i.item_id for i in items]

        def __call__(self, item: CalibrationItem, _repeat: int) -> str | None:
            if item.criterion == "P1":
                return None  # not this judge's question
            return s.reference(item.item_id).status or "uncertain"

    judge = Judge()
    run = run_calibration("j", "j@1", s, judge, repeats=2, n_boot=100)
    assert sorted(judge.prepared) == sorted(set(judge.prepared))
    assert set(judge.prepared) == {i.item_id for i in s.part("held_out")}
    assert "P1" not in {d.criterion for d in run.decisions}
    assert run.abstained and all(a.endswith(":P1") for a in run.abstained)
    assert run.metrics.n_judge_errors == 0
    assert (
        CalibrationRun.from_dict(json.loads(json.dumps(run.to_dict()))).abstained == run.abstained
    )
