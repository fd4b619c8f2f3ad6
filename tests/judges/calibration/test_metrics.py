"""Metrics checked against hand computations, a naive reference and scipy's bootstrap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges.calibration.agreement import human_agreement
from judges.calibration.metrics import (
    Estimate,
    Metrics,
    ScoredItem,
    bootstrap_rate,
    cohen_kappa,
    compute_metrics,
    confusion_matrix,
    macro_f1,
)
from judges.calibration.sets import STATUSES

REF = ["pass", "pass", "pass", "fail", "fail", "uncertain", "pass", "fail"]
PRED = ["pass", "fail", "pass", "fail", "pass", "uncertain", "pass", "uncertain"]


def test_confusion_matrix_by_hand() -> None:
    cm = confusion_matrix(REF, PRED)
    # rows: human pass, fail, uncertain, not_applicable; columns: judge
    assert cm == [[3, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 0]]


def test_macro_f1_by_hand() -> None:
    # pass: tp 3 fp 1 fn 1 -> 6/8; fail: tp 1 fp 1 fn 2 -> 2/5; uncertain: tp 1 fp 1 fn 0 -> 2/3
    expected = (6 / 8 + 2 / 5 + 2 / 3) / 3
    assert macro_f1(REF, PRED) == pytest.approx(expected)


def test_kappa_by_hand() -> None:
    po = 5 / 8
    # marginals: human pass 4, fail 3, uncertain 1; judge pass 4, fail 2, uncertain 2
    pe = (4 * 4 + 3 * 2 + 1 * 2) / 64
    assert cohen_kappa(REF, PRED) == pytest.approx((po - pe) / (1 - pe))
    assert cohen_kappa(["pass"] * 3, ["pass"] * 3) is None
    assert cohen_kappa(["pass", "fail"], ["fail", "pass"]) == pytest.approx(-1.0)


def _naive_macro_f1(ref: list[str], pred: list[str]) -> float:
    scores = []
    for label in sorted(set(ref)):  # the statuses the labels use (issue 14 item 19)
        tp = sum(r == p == label for r, p in zip(ref, pred, strict=True))
        fp = sum(p == label and r != label for r, p in zip(ref, pred, strict=True))
        fn = sum(r == label and p != label for r, p in zip(ref, pred, strict=True))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(STATUSES), st.sampled_from(STATUSES)), min_size=1, max_size=40
    )
)
def test_macro_f1_matches_a_naive_implementation(pairs: list[tuple[str, str]]) -> None:
    ref = [a for a, _ in pairs]
    pred = [b for _, b in pairs]
    assert macro_f1(ref, pred) == pytest.approx(_naive_macro_f1(ref, pred))
    assert sum(map(sum, confusion_matrix(ref, pred))) == len(pairs)


def test_bootstrap_rate_matches_scipy_percentile_interval() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    data = (rng.random(200) < 0.3).astype(float)
    ours = bootstrap_rate(list(data), [1.0] * len(data), seed=1, n_boot=4000)
    ref = stats.bootstrap(
        (data,), np.mean, n_resamples=4000, method="percentile", random_state=2, vectorized=True
    ).confidence_interval
    assert ours.value == pytest.approx(data.mean())
    assert ours.ci_low == pytest.approx(ref.low, abs=0.02)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.02)
    assert ours == bootstrap_rate(list(data), [1.0] * len(data), seed=1, n_boot=4000)
    assert bootstrap_rate([], [], seed=0) == Estimate(None, numerator=0, denominator=0)


def _s(i: int, ref: str | None, *st_: str | None, necessary: bool = True, **kw: Any) -> ScoredItem:
    return ScoredItem(f"i{i}", "R2", necessary, ref, tuple(st_), **kw)


def test_compute_metrics_counts() -> None:
    scored = [
        _s(0, "pass", "pass", "pass", style_tags=("a",)),
        _s(1, "fail", "pass", "pass", style_tags=("a",), relation="must_change", base_item_id="b"),
        _s(2, "fail", "fail", "uncertain", relation="must_change", base_item_id="b"),
        _s(3, "pass", "fail", "fail", relation="must_not_change", base_item_id="b"),
        _s(4, "pass", "pass", None, relation="must_not_change", base_item_id="b"),
        _s(5, None, "pass", "pass"),
        _s(6, "fail", None, None),
        _s(7, "fail", "pass", necessary=False),
    ]
    m = compute_metrics(scored, {"b": "pass"}, seed=0, n_boot=200)
    assert (m.n_items, m.n_scored, m.n_disputed, m.n_judge_errors) == (8, 6, 1, 1)
    assert (m.missed_critical.numerator, m.missed_critical.denominator) == (1, 2)
    assert (m.false_reject.numerator, m.false_reject.denominator) == (1, 3)
    assert (m.invariance_violation.numerator, m.invariance_violation.denominator) == (1, 2)
    assert (m.sensitivity.numerator, m.sensitivity.denominator) == (1, 2)
    assert (m.repeat_agreement.numerator, m.repeat_agreement.denominator) == (4, 5)
    assert m.uncertain_rate.value == 0.0
    assert m.judge_error_rate.value == pytest.approx(1 / 8)
    assert m.accuracy.value == pytest.approx(3 / 6)
    assert m.by_style["a"]["n_items"] == 2
    assert m.by_style["a"]["missed_critical"]["value"] == 1.0
    for est in (m.accuracy, m.macro_f1, m.missed_critical, m.false_reject):
        assert est.ci_low is not None and est.ci_high is not None and est.value is not None
        assert est.ci_low <= est.value + 1e-9 and est.value <= est.ci_high + 1e-9
    assert Metrics.from_dict(m.to_dict()) == m


def test_human_agreement_by_hand() -> None:
    per_item = [
        {"a": "pass", "b": "pass"},
        {"a": "fail", "b": "fail"},
        {"a": "fail", "b": "pass"},
        {"a": "pass", "b": "pass", "c": "pass"},
        {"a": "pass"},
    ]
    h = human_agreement(per_item, seed=0, n_boot=200)
    assert h.n_items == 4
    # pairs: (a,b) x4 -> 3 agree; (a,c), (b,c) on item 4 -> agree
    assert (h.agreement.numerator, h.agreement.denominator) == (5, 6)
    ab = next(p for p in h.pairs if p["annotators"] == ["a", "b"])
    assert ab["n"] == 4
    by_hand = cohen_kappa(["pass", "fail", "fail", "pass"], ["pass", "fail", "pass", "pass"])
    assert ab["kappa"]["value"] == pytest.approx(by_hand)


@pytest.mark.parametrize(("k", "n"), [(0, 6), (1, 10), (7, 11), (20, 20)])
def test_wilson_interval_matches_scipy(k: int, n: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    ours = bootstrap_rate([1.0] * k + [0.0] * (n - k), [1.0] * n, seed=0, n_boot=200)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.wilson_low == pytest.approx(ref.low, abs=1e-6)
    assert ours.wilson_high == pytest.approx(ref.high, abs=1e-6)
    if k == 0:  # the percentile bootstrap collapses on zero events; Wilson does not
        assert (ours.ci_low, ours.ci_high) == (0.0, 0.0)
        assert ours.wilson_high is not None and ours.wilson_high > 0.3
