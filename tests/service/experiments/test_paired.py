"""The experiment report's statistics, each against a small example worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from service.experiments.paired import (
    bootstrap_difference,
    consistency,
    cost_per_pass,
    count_outcomes,
    item_differences,
    latency_summary,
    pair_table,
)


def test_pass_rate_is_over_every_case_with_pending_and_incomplete_visible() -> None:
    # 3 pass, 1 fail, 1 pending, 1 incomplete: 3 / 6 = 0.5; range 3/5 .. 4/5 (incomplete out)
    c = count_outcomes(["pass", "fail", "pass", "pending", "incomplete", "pass"])
    assert (c.passed, c.failed, c.pending, c.incomplete, c.running) == (3, 1, 1, 1, 0)
    assert c.total == 6
    assert c.pass_rate == pytest.approx(0.5)
    assert c.range_text() == "between 60 % and 80 %"


def test_an_unknown_outcome_word_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="unknown outcomes \\['passed'\\]"):
        count_outcomes(["pass", "passed"])


A = {("i1", 0): "pass", ("i1", 1): "pass", ("i2", 0): "pass", ("i2", 1): "fail"}
B = {("i1", 0): "pass", ("i1", 1): "fail", ("i2", 0): "fail", ("i2", 1): "pending"}


def test_pair_table_counts_concordant_discordant_and_undecided_pairs() -> None:
    # (i1,0) pass/pass; (i1,1) pass/fail -> only A; (i2,0) pass/fail -> only A;
    # (i2,1) fail/pending -> undecided
    t = pair_table(A, B)
    assert (t.both_pass, t.only_a, t.only_b, t.both_fail, t.undecided) == (1, 2, 0, 0, 1)
    # exact McNemar on 2 vs 0 discordant: 2 * (1/2)^2 = 0.5
    assert t.mcnemar_p == pytest.approx(0.5)


def test_a_key_missing_on_one_side_is_undecided() -> None:
    t = pair_table({("x", 0): "pass"}, {})
    assert t.undecided == 1 and t.only_a == 0


@pytest.mark.parametrize(
    ("only_a", "only_b", "hand"),
    [
        (1, 6, 2 * (1 + 7) / 2**7),  # 0.125
        (0, 5, 2 / 2**5),  # 0.0625
        (3, 3, 1.0),
        (0, 0, 1.0),
    ],
)
def test_mcnemar_is_the_exact_binomial_on_discordant_pairs(
    only_a: int, only_b: int, hand: float
) -> None:
    a = {(f"i{k}", 0): "pass" for k in range(only_a)}
    b = {(f"i{k}", 0): "fail" for k in range(only_a)}
    a |= {(f"j{k}", 0): "fail" for k in range(only_b)}
    b |= {(f"j{k}", 0): "pass" for k in range(only_b)}
    p = pair_table(a, b).mcnemar_p
    assert p == pytest.approx(hand)
    if only_a + only_b:
        assert p == pytest.approx(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def test_item_differences_count_passes_of_a_minus_passes_of_b_per_item() -> None:
    diff, cases = item_differences(A, B)
    # i1: 2 - 1 = 1 over 2 cases; i2: 1 - 0 = 1 over 2 cases
    assert diff.tolist() == [1.0, 1.0]
    assert cases.tolist() == [2.0, 2.0]


def test_bootstrap_of_two_items_spans_their_two_values() -> None:
    # items with diffs +1 and 0 (one case each): a resample is {1,1}, {1,0}/{0,1} or {0,0},
    # so the draws are 1, 0.5, 0 with chances 1/4, 1/2, 1/4 and the 95 % interval is [0, 1]
    d = bootstrap_difference(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.random.default_rng(1))
    assert d.point == pytest.approx(0.5)
    assert (d.low, d.high) == (0.0, 1.0)


def test_bootstrap_of_identical_items_has_no_width_and_is_seeded() -> None:
    same = bootstrap_difference(np.full(5, 2.0), np.full(5, 3.0), np.random.default_rng(3))
    assert (same.point, same.low, same.high) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    diff, cases = np.array([3.0, -1.0, 0.0, 2.0, 1.0, -2.0]), np.full(6, 3.0)
    one = bootstrap_difference(diff, cases, np.random.default_rng(7))
    two = bootstrap_difference(diff, cases, np.random.default_rng(7))
    assert one == two
    assert one.point == pytest.approx(3 / 18)
    assert one.low is not None and one.high is not None and one.point is not None

    assert one.low < one.point < one.high


def test_bootstrap_interval_matches_the_hand_worked_resampling_distribution() -> None:
    # 4 items, diffs 1 0 0 0 (one case each): a draw is k/4 with k ~ Binomial(4, 1/4).
    # P(k = 0) = 81/256 > 2.5 %, so the lower end is 0; P(k <= 2) = 243/256 = 0.949 < 0.975
    # <= P(k <= 3) = 255/256, so the upper end is 3/4
    d = bootstrap_difference(np.array([1.0, 0, 0, 0]), np.ones(4), np.random.default_rng(11))
    assert d.point == pytest.approx(0.25)
    assert (d.low, d.high) == (0.0, 0.75)


def test_bootstrap_without_cases_has_no_numbers() -> None:
    d = bootstrap_difference(np.zeros(0), np.zeros(0), np.random.default_rng(0))
    assert (d.point, d.low, d.high) == (None, None, None)


def test_latency_by_nearest_rank_keeps_timeouts_in() -> None:
    # sorted 100 200 300 400 5000; p50: rank ceil(2.5) = 3 -> 300; p95: rank ceil(4.75) = 5
    lat = latency_summary(
        [300, 100, 5000, None, 200, 400], [False, False, True, False, False, False]
    )
    assert (lat.p50_ms, lat.p95_ms) == (300.0, 5000.0)
    assert (lat.measured, lat.timeouts, lat.unknown) == (5, 1, 1)
    # 20 values 1..20: p95 is rank 19; p50 is rank 10
    twenty = latency_summary([float(v) for v in range(20, 0, -1)], [False] * 20)
    assert (twenty.p50_ms, twenty.p95_ms) == (10.0, 19.0)


def test_cost_per_pass_divides_total_cost_by_passes() -> None:
    c = cost_per_pass([0.01] * 6, 3)
    assert c.total_usd == pytest.approx(0.06)
    assert c.per_pass_usd == pytest.approx(0.02)
    assert cost_per_pass([0.01, 0.02], 0).per_pass_usd is None
    unknown = cost_per_pass([0.01, None], 1)
    assert (unknown.total_usd, unknown.per_pass_usd, unknown.known, unknown.unknown) == (
        None,
        None,
        1,
        1,
    )
    assert not math.isnan(c.per_pass_usd or 0.0)


def test_consistency_classes_of_items_over_repeats() -> None:
    got = consistency(
        {
            "a": ["pass", "pass", "pass"],
            "b": ["fail", "fail", "fail"],
            "c": ["pass", "fail", "pass"],
            "d": ["pending", "pass", "pass"],
            "e": ["fail", "incomplete", "fail"],
        }
    )
    assert got == {
        "always_right": ["a"],
        "always_wrong": ["b"],
        "unstable": ["c"],
        "unresolved": ["d", "e"],
    }
