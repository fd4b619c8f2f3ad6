"""The gate on graded judges: weighted kappa, mean absolute level error, errors across a bound.

A label folder of the graded example (the ``status`` column holds a level) and judges given as
plain verdict functions: one that sees the levels people wrote, one a level off at random but
never across a bound, and one that lifts every 3 to a 4 (across ``I >= 4``).
"""

from __future__ import annotations

import random

import pytest

from judges import Evidence, Verdict, VerdictStatus
from judges.calibration import (
    CalibrationItem,
    CalibrationSet,
    run_calibration,
    set_from_label_table,
)
from judges.calibration.ordinal import OrdinalMetrics, weighted_kappa
from regua.errors import CalibrationError
from tasks import bundled_registry

TASK = bundled_registry().get("lighthouse-night-graded@1")
LEVELS = [5, 4, 3, 2, 4, 3, 1, 0, 5, 3, 4, 2, 3, 4, 5, 1]


def label_set() -> tuple[dict[str, int], CalibrationSet]:
    rows = ["file,criterion,status,annotator"]
    truth: dict[str, int] = {}
    files: dict[str, bytes] = {}
    for n, level in enumerate(LEVELS):
        name = f"d{n:02d}.svg"
        files[name] = f"<svg>{n}</svg>".encode()
        rows.append(f"{name},I,{level},ann")
        truth[f"{name}:I"] = level
    folder = set_from_label_table("\n".join(rows) + "\n", files, TASK, set_id="graded-test")
    return truth, folder.calibration_set


def verdict(item: CalibrationItem, level: int | None) -> Verdict:
    status = "uncertain" if level is None else TASK.level_status(item.criterion, level)
    ev = Evidence(None, None, f"level {level}")
    return Verdict(item.criterion, VerdictStatus(status), ev, "grader@1", level=level)


def calibrate(answer: dict[str, int | None]) -> tuple[str, OrdinalMetrics]:
    _truth, cal_set = label_set()
    run = run_calibration(
        "grader@1",
        "grader@1",
        cal_set,
        lambda item, _r: verdict(item, answer[item.item_id]),
        split="all",
        repeats=1,
        n_boot=200,
    )
    (decision,) = run.decisions
    assert decision.criterion == "I" and "ordinal" in decision.metrics
    assert any(r.levels for r in run.results)  # the levels are kept with the run
    return decision.status or "", OrdinalMetrics.from_dict(decision.metrics["ordinal"])


def test_labels_hold_levels_and_their_status_follows_the_bounds() -> None:
    truth, cal_set = label_set()
    for item_id, level in truth.items():
        assert cal_set.reference_level(item_id) == level
        expected = "pass" if level >= 4 else "fail"
        assert cal_set.reference(item_id).status == expected


def test_a_judge_that_sees_the_levels_is_trusted() -> None:
    truth, _ = label_set()
    status, m = calibrate({k: v for k, v in truth.items()})
    assert status == "trusted"
    assert m.weighted_kappa.value == pytest.approx(1.0)
    assert m.mean_abs_error.value == 0 and m.cross_bound_rate.value == 0
    assert m.items == len(LEVELS) and m.unanswered == 0


def test_a_judge_a_level_off_within_the_bounds_is_measured_not_pooled_with_exact() -> None:
    truth, _ = label_set()
    rng = random.Random(3)
    # one level off, but never across I >= 4: 5 <-> 4 stays pass, 0..3 stay fail
    near: dict[str, int | None] = {
        k: (v - 1 if v in (5, 1, 2) and rng.random() < 0.5 else v) for k, v in truth.items()
    }
    status, m = calibrate(near)
    assert m.cross_bound_rate.value == 0
    assert 0 < (m.mean_abs_error.value or 0) < 1
    assert m.weighted_kappa.value is not None and m.weighted_kappa.value > 0.8
    assert status in ("trusted", "inconclusive")


def test_a_judge_that_lifts_every_3_to_a_4_errs_across_the_minimum_and_is_refused() -> None:
    truth, _ = label_set()
    lifted: dict[str, int | None] = {k: (4 if v == 3 else v) for k, v in truth.items()}
    status, m = calibrate(lifted)
    assert m.cross_bound_rate.numerator == LEVELS.count(3)
    assert status == "not_trusted"
    assert m.weighted_kappa.value is not None and m.weighted_kappa.value > 0.8  # close levels...


def test_a_judge_far_off_is_refused_and_uncertain_answers_are_counted_apart() -> None:
    truth, _ = label_set()
    far: dict[str, int | None] = {
        k: (None if n % 4 == 0 else 5 - v) for n, (k, v) in enumerate(truth.items())
    }
    status, m = calibrate(far)
    assert status == "not_trusted"
    assert m.unanswered == 4 and m.items == len(LEVELS) - 4
    assert (m.mean_abs_error.value or 0) > 1


def test_weighted_kappa_by_hand() -> None:
    assert weighted_kappa([(0, 0), (5, 5), (3, 3)], (0, 5)) == pytest.approx(1.0)
    # two items 0 and 2 rated 2 and 0: observed weighted disagreement equals chance's
    assert weighted_kappa([(0, 2), (2, 0)], (0, 5)) == pytest.approx(-1.0)
    assert weighted_kappa([(3, 3), (3, 3)], (0, 5)) is None  # one level only: undefined


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("d.svg,X1,3,ann", "X1 is not graded"),
        ("d.svg,I,7,ann", "level 7 is off I's scale 0..5"),
    ],
)
def test_bad_level_labels_are_refused_with_the_line(row: str, message: str) -> None:
    text = f"file,criterion,status,annotator\n{row}\n"
    with pytest.raises(CalibrationError, match=f"line 2: {message}"):
        set_from_label_table(text, {"d.svg": b"<svg/>"}, TASK, set_id="bad")
