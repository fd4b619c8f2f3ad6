"""The three-way gate: trusted, not trusted, inconclusive — and what would decide it (issue 13).

Recall of each class is read by the lower bound of its Wilson interval (TPR on ``pass``, TNR on
``fail``); a criterion the labels cannot decide says how many more labels of which class would.
A judge that passes everything is never trusted, whether the set has failed items or not.
"""

from __future__ import annotations

import pytest

from judges.calibration.gate import GateConfig, GateDecision, GateThresholds
from judges.calibration.metrics import wilson_interval
from judges.calibration.runner import run_calibration
from judges.calibration.sets import CalibrationItem, CalibrationSet, Label
from judges.calibration.trust import more_for_lower_bound, more_for_upper_bound

T = "pelican-bicycle-structured@1"


def _set(statuses: list[str]) -> CalibrationSet:
    items = [CalibrationItem(f"i{k}", f"{k:064x}", "R2", T) for k in range(len(statuses))]
    labels = [Label(i.item_id, "ann", s, "t") for i, s in zip(items, statuses, strict=True)]
    return CalibrationSet("t@1", T, tuple(items), tuple(labels))


def _decide(statuses: list[str], judge: list[str], gate: GateConfig | None = None) -> GateDecision:
    s = _set(statuses)
    answers = {f"i{k}": v for k, v in enumerate(judge)}
    run = run_calibration(
        "g",
        "g@1",
        s,
        lambda i, _r: answers[i.item_id],
        split="all",
        repeats=1,
        n_boot=200,
        gate=gate or GateConfig(),
    )
    return run.decision("R2")


def test_a_judge_right_on_enough_labels_of_each_class_is_trusted() -> None:
    d = _decide(["pass"] * 10 + ["fail"] * 10, ["pass"] * 10 + ["fail"] * 10)
    assert (d.status, d.passed, d.needs) == ("trusted", True, ())
    assert d.reasons == ("all thresholds met",)


def test_too_few_fail_labels_is_inconclusive_and_says_how_many_more() -> None:
    d = _decide(["pass"] * 10 + ["fail"] * 2, ["pass"] * 10 + ["fail"] * 2)
    assert d.status == "inconclusive" and not d.passed
    (need,) = d.needs
    assert need.label == "fail"
    # 2/2 gives a lower bound of 0.34; at the observed rate (all right) 2 more reach 0.5
    assert need.more == 2 and wilson_interval(4, 4)[0] >= 0.5 > wilson_interval(3, 3)[0]
    assert "about 2 more items labelled 'fail' would decide it" in d.reasons[-1]
    assert "recall of 'fail' 2/2: 95% interval [0.34, 1.00] straddles 0.5" in d.reasons[0]


def test_a_judge_that_misses_most_failures_is_not_trusted() -> None:
    d = _decide(["pass"] * 10 + ["fail"] * 8, ["pass"] * 10 + ["fail"] * 1 + ["pass"] * 7)
    assert d.status == "not_trusted" and not d.passed and d.needs == ()
    assert any(r.startswith("missed-critical-error rate 0.875 (7/8)") for r in d.reasons)
    assert any("recall of 'fail' 1/8: upper 95% bound" in r for r in d.reasons)


@pytest.mark.parametrize("n_fail", [0, 1, 3, 20])
def test_a_pass_everything_judge_is_never_trusted(n_fail: int) -> None:
    statuses = ["pass"] * 30 + ["fail"] * n_fail
    d = _decide(statuses, ["pass"] * len(statuses))
    assert not d.passed and d.status != "trusted"
    if n_fail == 0:  # nothing shows it could catch a failure
        assert d.status == "inconclusive" and {n.label for n in d.needs} == {"fail"}
    else:
        assert d.status == "not_trusted"


def test_an_always_uncertain_judge_is_not_trusted() -> None:
    d = _decide(["pass"] * 10 + ["fail"] * 10, ["uncertain"] * 20)
    assert d.status == "not_trusted"


def test_cautious_missed_critical_rule_can_be_inconclusive_with_a_count() -> None:
    cautious = GateConfig("cautious@1", default=GateThresholds(use_upper_bound=True))
    d = _decide(["pass"] * 20 + ["fail"] * 20, ["pass"] * 20 + ["fail"] * 20, cautious)
    assert d.status == "inconclusive"
    (need,) = d.needs
    assert need.label == "fail" and need.check == "missed-critical-error rate"
    assert need.more is not None and wilson_interval(0, 20 + need.more)[1] < 0.05


def test_counts_of_more_labels() -> None:
    assert more_for_lower_bound(0, 0, 0.5) == 4  # an unlabelled class: 4 right answers
    assert more_for_lower_bound(1, 2, 0.5) is None  # at 50 % no count clears 0.5
    m = more_for_upper_bound(1, 4, 0.5)  # at 25 %: the fewest labels putting the upper bound < 0.5
    assert m is not None
    assert wilson_interval((4 + m) / 4, 4 + m)[1] < 0.5 <= wilson_interval((3 + m) / 4, 3 + m)[1]
    assert more_for_upper_bound(0, 0, 0.5) is None


def test_old_records_read_their_status_from_passed() -> None:
    d = _decide(["pass"] * 10 + ["fail"] * 10, ["pass"] * 10 + ["fail"] * 10)
    old = {k: v for k, v in d.to_dict().items() if k not in ("status", "needs")}
    assert GateDecision.from_dict(old).status == "trusted"
    assert GateDecision.from_dict({**old, "passed": False}).status == "not_trusted"
    inconclusive = _decide(["pass"] * 10 + ["fail"] * 2, ["pass"] * 10 + ["fail"] * 2)
    assert GateDecision.from_dict(inconclusive.to_dict()) == inconclusive
