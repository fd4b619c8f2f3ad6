"""Each basic statistic against hand-worked values or an independent library (scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from service.reports import ReportConfig, build_report
from service.reports.stats import (
    RANGE_LABEL,
    binomial_two_sided_p,
    bootstrap_ratio_draws,
    mcnemar_exact,
    nearest_rank,
    pass_range,
    percentile_interval,
    rng_for,
)
from tests.helpers.reports import counts, runs


def test_72_18_10_is_a_range_from_72_to_82_percent() -> None:
    rng = pass_range(72, 18, 10)
    assert rng.lower == pytest.approx(0.72)
    assert rng.upper == pytest.approx(0.82)
    assert rng.text() == "between 72 % and 82 %"
    assert "not a confidence interval" in RANGE_LABEL


def test_72_18_10_in_a_built_report_with_incomplete_runs_left_out() -> None:
    report = build_report(runs("m", counts(72, 18, 10, incomplete=5)))
    group = report["task_versions"][0]["groups"][0]
    assert group["counts"] == {
        "pass": 72,
        "fail": 18,
        "pending": 10,
        "incomplete": 5,
        "runs": 105,
    }
    assert group["pass_range"]["text"] == "between 72 % and 82 %"
    assert group["pass_range"]["label"] == RANGE_LABEL
    assert group["decided_rate"] == pytest.approx(72 / 90)
    assert "5 incomplete" in group["incomplete_note"]


def test_range_collapses_without_pending_and_is_empty_without_runs() -> None:
    assert pass_range(3, 1, 0).text() == "75 %"
    assert pass_range(0, 0, 0).lower is None


@pytest.mark.parametrize("b", range(0, 13))
@pytest.mark.parametrize("c", [0, 1, 2, 5, 9, 20])
def test_mcnemar_equals_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else sps.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("k", "n"), [(430, 1000), (1900, 4000), (2, 3000), (0, 1074)])
def test_binomial_p_for_large_n_matches_scipy(k: int, n: int) -> None:
    assert binomial_two_sided_p(k, n) == pytest.approx(
        sps.binomtest(k, n, 0.5).pvalue, rel=1e-8, abs=1e-300
    )


def test_nearest_rank_by_hand() -> None:
    values = np.array([15.0, 20.0, 35.0, 40.0, 50.0])
    # rank = ceil(p/100 * n): p30 → ceil(1.5) = 2; p40 → 2; p50 → ceil(2.5) = 3; p100 → 5
    assert nearest_rank(values, 5) == 15.0
    assert nearest_rank(values, 30) == 20.0
    assert nearest_rank(values, 40) == 20.0
    assert nearest_rank(values, 50) == 35.0
    assert nearest_rank(values, 100) == 50.0
    ten = np.arange(1.0, 11.0)
    assert nearest_rank(ten, 50) == 5.0
    assert nearest_rank(ten, 95) == 10.0
    assert nearest_rank(np.array([]), 50) is None


def test_latency_excludes_timeouts_and_unknowns_and_counts_them() -> None:
    base = runs("m", ["pass", "pass", "fail", "fail", "pass"])
    rows = [
        base[0]._replace(latency_ms=300.0),
        base[1]._replace(latency_ms=100.0),
        base[2]._replace(latency_ms=200.0),
        base[3]._replace(latency_ms=None, timed_out=True),
        base[4]._replace(latency_ms=None),
    ]
    lat = build_report(rows)["task_versions"][0]["groups"][0]["latency"]
    # measured: 100, 200, 300 → p50 = rank ceil(1.5) = 2 → 200; p95 = rank 3 → 300
    assert (lat["p50_ms"], lat["p95_ms"]) == (200.0, 300.0)
    assert (lat["measured"], lat["timeouts"], lat["unknown"]) == (3, 1, 1)
    assert "nearest rank" in lat["method"]


def test_cost_per_pass_is_total_over_passes_and_never_estimated() -> None:
    known = runs("a", ["pass", "fail", "pass", "pending"], cost_usd=0.5)
    cost = build_report(known)["task_versions"][0]["groups"][0]["generation_cost"]
    assert cost["per_pass_usd"] == pytest.approx(2.0 / 2)
    assert cost["total_usd"] == pytest.approx(2.0)
    partial = [*known[:3], known[3]._replace(cost_usd=None)]
    cost = build_report(partial)["task_versions"][0]["groups"][0]["generation_cost"]
    assert cost["per_pass_usd"] is None
    assert cost["total_usd"] is None
    assert cost["note"].startswith("not available")
    none_passed = runs("b", ["fail", "fail"], cost_usd=1.0)
    cost = build_report(none_passed)["task_versions"][0]["groups"][0]["generation_cost"]
    assert cost["per_pass_usd"] is None and "no passed result" in cost["note"]


def test_judging_and_total_cost_per_pass_sit_beside_generation_cost() -> None:
    rows = runs("a", ["pass", "fail", "pass", "pending"], cost_usd=0.5)
    judged = [r._replace(judging_cost_usd=0.01 * (i + 1)) for i, r in enumerate(rows)]
    group = build_report(judged)["task_versions"][0]["groups"][0]
    assert group["judging_cost"]["total_usd"] == pytest.approx(0.1)
    assert group["judging_cost"]["per_pass_usd"] == pytest.approx(0.1 / 2)
    assert group["total_cost"]["per_pass_usd"] == pytest.approx((2.0 + 0.1) / 2)
    unpriced = [*judged[:3], judged[3]._replace(judging_cost_usd=None)]  # a call without price
    group = build_report(unpriced)["task_versions"][0]["groups"][0]
    assert group["judging_cost"]["per_pass_usd"] is None
    assert group["judging_cost"]["note"].startswith("not available")
    assert group["total_cost"]["per_pass_usd"] is None
    assert group["generation_cost"]["per_pass_usd"] == pytest.approx(1.0)  # unaffected


def _items(seed: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    decided = gen.integers(0, 4, 300)  # 0..3 decided repeats per item
    passes = gen.binomial(decided, 0.7)
    return passes.astype(np.int64), decided.astype(np.int64)


def test_bootstrap_is_reproducible_with_the_stored_seed() -> None:
    p, d = _items(1)
    a = bootstrap_ratio_draws(p, d, 1000, rng_for(42, "t@1", "m"))
    b = bootstrap_ratio_draws(p, d, 1000, rng_for(42, "t@1", "m"))
    c = bootstrap_ratio_draws(p, d, 1000, rng_for(43, "t@1", "m"))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    rows = runs("m", ["pass", "fail", "pass", "pending"] * 20, repeats=2)
    r1 = build_report(rows, ReportConfig(seed=7))["task_versions"][0]["groups"][0]["ci"]
    r2 = build_report(rows, ReportConfig(seed=7))["task_versions"][0]["groups"][0]["ci"]
    assert r1 == r2 and r1["resamples"] == 1000


def test_bootstrap_by_item_kind_matches_resampling_items_one_by_one() -> None:
    p, d = _items(2)
    fast = bootstrap_ratio_draws(p, d, 20000, np.random.default_rng(5))
    gen = np.random.default_rng(6)
    idx = gen.integers(0, p.size, size=(20000, p.size))
    naive = p[idx].sum(1) / d[idx].sum(1)
    for q in (0.025, 0.5, 0.975):
        assert np.quantile(fast, q) == pytest.approx(np.quantile(naive, q), abs=0.006)
    assert fast.std() == pytest.approx(naive.std(), rel=0.05)


def test_bootstrap_interval_matches_scipy_percentile_bootstrap_without_repeats() -> None:
    gen = np.random.default_rng(3)
    outcomes = (gen.random(200) < 0.6).astype(np.int64)
    draws = bootstrap_ratio_draws(outcomes, np.ones(200, np.int64), 20000, rng_for(1, "x"))
    ours = percentile_interval(draws)
    assert ours is not None
    ref = sps.bootstrap(
        (outcomes,), np.mean, n_resamples=20000, method="percentile", random_state=4
    ).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.01)
    assert ours[1] == pytest.approx(ref.high, abs=0.01)
    # and the normal approximation agrees to the second decimal for n = 200
    half = 1.96 * math.sqrt(outcomes.mean() * (1 - outcomes.mean()) / 200)
    assert ours[1] - ours[0] == pytest.approx(2 * half, abs=0.02)


def test_interval_is_absent_when_nothing_is_decided() -> None:
    draws = bootstrap_ratio_draws(np.zeros(5, np.int64), np.zeros(5, np.int64), 100, rng_for(1))
    assert np.isnan(draws).all()
    assert percentile_interval(draws) is None
