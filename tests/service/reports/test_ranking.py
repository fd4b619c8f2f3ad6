"""Paired comparisons and Bradley-Terry against hand counts and a direct likelihood fit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from service.reports import build_report
from service.reports.ranking import (
    bootstrap_wins,
    bradley_terry,
    caution,
    elo,
    fit_bradley_terry,
    paired_table,
)
from service.reports.stats import rng_for
from tests.helpers.reports import runs


def _direct_fit(wins: np.ndarray, prior: float) -> np.ndarray:
    """Maximise the BT log-likelihood with scipy (the independent reference)."""
    m = wins.shape[0]
    w = wins + prior * (1 - np.eye(m))

    def nll(free: np.ndarray) -> float:
        theta = np.concatenate(([0.0], free))
        diff = theta[:, None] - theta[None, :]
        return float(-(w * -np.logaddexp(0.0, -diff)).sum())

    res = optimize.minimize(nll, np.zeros(m - 1), method="BFGS", options={"gtol": 1e-10})
    theta: np.ndarray = np.concatenate(([0.0], res.x))
    centred: np.ndarray = theta - theta.mean()
    return centred


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("prior", [0.0, 0.5])
def test_bradley_terry_matches_direct_likelihood_maximisation(seed: int, prior: float) -> None:
    gen = np.random.default_rng(seed)
    wins = gen.integers(1, 40, size=(5, 5)).astype(float)  # every pair compared: connected
    np.fill_diagonal(wins, 0.0)
    ours = fit_bradley_terry(wins, prior)
    assert ours == pytest.approx(_direct_fit(wins, prior), abs=1e-5)


def test_bradley_terry_stays_finite_when_a_model_never_loses() -> None:
    wins = np.array([[0, 10, 10], [0, 0, 5], [0, 5, 0]], dtype=float)
    theta = fit_bradley_terry(wins, prior=0.5)
    assert np.isfinite(theta).all()
    assert theta[0] > theta[1] and theta[0] > theta[2]
    assert theta == pytest.approx(_direct_fit(wins, 0.5), abs=1e-5)


def test_batched_fit_equals_one_by_one() -> None:
    gen = np.random.default_rng(9)
    batch = gen.integers(0, 20, size=(4, 6, 6)).astype(float)
    together = fit_bradley_terry(batch, 0.5)
    for i in range(4):
        assert together[i] == pytest.approx(fit_bradley_terry(batch[i], 0.5), abs=1e-8)


def test_win_matrix_counts_pass_over_fail_on_the_same_slot() -> None:
    decided = np.array([[1, 1, 0, np.nan], [0, 1, 1, 0], [0, 0, 0, 1]], dtype=float)
    wins, _ = bootstrap_wins(decided, 0, rng_for(1))
    # model 0 beats 1 on slot 0, 2 on slots 0 and 1; model 1 beats 0 on slot 2, 2 on slots 1, 2;
    # model 2 beats 1 on slot 3 (model 0 has no decided result there)
    assert wins.tolist() == [[0, 1, 2], [1, 0, 2], [0, 1, 0]]


def test_bootstrap_wins_are_sums_over_resampled_slots() -> None:
    gen = np.random.default_rng(4)
    decided = (gen.random((3, 50)) < 0.5).astype(float)
    _, boot = bootstrap_wins(decided, 200, np.random.default_rng(11))
    picks = np.random.default_rng(11).integers(0, 50, size=(200, 50))
    for b in (0, 57, 199):
        sample = decided[:, picks[b]]
        expect, _ = bootstrap_wins(sample, 0, rng_for(1))
        assert boot[b] == pytest.approx(expect)


def test_large_problems_take_the_low_memory_path_with_the_same_result() -> None:
    gen = np.random.default_rng(8)
    decided = np.where(gen.random((6, 80)) < 0.1, np.nan, (gen.random((6, 80)) < 0.5) * 1.0)
    fast = bootstrap_wins(decided, 50, np.random.default_rng(1))
    slow = bootstrap_wins(decided, 50, np.random.default_rng(1), max_cells=10)
    assert fast[0] == pytest.approx(slow[0])
    assert fast[1] == pytest.approx(slow[1])


def test_elo_readout() -> None:
    assert elo(0.0) == 1500.0
    assert elo(math.log(10.0)) == pytest.approx(1900.0)
    assert elo(-math.log(10.0) / 2) == pytest.approx(1300.0)


def _models(bt: dict[str, object]) -> list[dict[str, Any]]:
    """The ranked models of a Bradley-Terry result."""
    models = bt["models"]
    assert isinstance(models, list)
    return models


def test_technical_tie_when_intervals_overlap_and_not_when_separated() -> None:
    gen = np.random.default_rng(2)
    k = 400
    strong = (gen.random(k) < 0.95).astype(float)
    weak = (gen.random(k) < 0.10).astype(float)
    twin = (gen.random(k) < 0.10).astype(float)
    bt = bradley_terry(["strong", "weak", "twin"], np.stack([strong, weak, twin]), 300, rng_for(3))
    by = {r["model"]: r for r in _models(bt)}
    assert by["strong"]["rank"] == 1 and not by["strong"]["technical_tie"]
    assert by["weak"]["technical_tie"] and by["weak"]["tied_with"] == ["twin"]
    lo, hi = by["strong"]["elo_interval"]
    assert lo <= by["strong"]["elo"] <= hi
    assert "robustness view" in str(bt["elo_note"])


def test_models_without_decided_runs_are_not_ranked() -> None:
    decided = np.array([[1, 0, 1], [0, 0, 1], [np.nan, np.nan, np.nan]])
    bt = bradley_terry(["a", "b", "c"], decided, 50, rng_for(1))
    assert bt["not_ranked"] == ["c"]
    assert [r["model"] for r in _models(bt)] == ["a", "b"]


def test_paired_table_by_hand_and_mcnemar_against_scipy() -> None:
    a = ["pass", "pass", "fail", "fail", "pass", "pending"]
    b = ["pass", "fail", "pass", "fail", "fail", "pass"]
    report = build_report(runs("A", a) + runs("B", b))
    (pair,) = report["task_versions"][0]["paired"]
    assert (pair["both_pass"], pair["only_a"], pair["only_b"], pair["neither"]) == (1, 2, 1, 1)
    assert pair["pairs"] == 5 and pair["excluded_undecided"] == 1
    assert pair["mcnemar_p"] == pytest.approx(sps.binomtest(2, 3, 0.5).pvalue)
    assert "Only 3 items separate them" in pair["caution"]


def test_models_that_never_meet_get_no_pairs_and_no_ranking() -> None:
    decided = np.array([[1, 0, np.nan, np.nan], [np.nan, np.nan, 1, 0]])
    assert paired_table(["a", "b"], decided, ~np.isnan(decided), has_repeats=False) == []
    bt = bradley_terry(["a", "b"], decided, 20, rng_for(1))
    assert bt["models"] == [] and "not computed" in str(bt["note"])


def test_paired_table_direct() -> None:
    decided = np.array([[1, 1, 0, 0], [1, 0, 1, 0]], dtype=float)
    (row,) = paired_table(["x", "y"], decided, ~np.isnan(decided), has_repeats=True)
    assert (row["both_pass"], row["only_a"], row["only_b"], row["neither"]) == (1, 1, 1, 1)
    assert "not independent" in str(row["caution"])


def test_caution_wording() -> None:
    assert caution(0, 0, 0, False) == "No shared decided items: these two cannot be compared."
    assert caution(30, 10, 100, False) is None
    assert "indicative" in str(caution(12, 3, 20, False))
