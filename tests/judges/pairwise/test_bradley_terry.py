"""Bradley-Terry, Elo, technical ties, preliminary marks and the matrix, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from judges.pairwise import Comparison, elo, fit_scores, rank, technical_ties, win_matrix
from judges.pairwise.bradley_terry import bootstrap_intervals
from judges.pairwise.model import Result


def _cmp(a: str, b: str, result: Result, n: int = 1) -> list[Comparison]:
    return [Comparison(a, b, result)] * n


def test_two_models_three_to_one_gives_the_closed_form_scores_and_elo() -> None:
    data = _cmp("A", "B", "a", 3) + _cmp("A", "B", "b", 1)
    scores = fit_scores(win_matrix(data, ["A", "B"]), prior=0.0)
    # p_A / p_B = 3 (wins ratio), centred log-strengths are ±ln(3)/2
    assert scores[0] == pytest.approx(math.log(3) / 2, abs=1e-8)
    assert scores[1] == pytest.approx(-math.log(3) / 2, abs=1e-8)
    assert elo(scores[0]) - elo(scores[1]) == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert elo(0.0) == 1500.0  # the one convention: 1500 is the average model


def test_a_tie_counts_half_a_win_for_each_side() -> None:
    w = win_matrix(_cmp("A", "B", "a", 1) + _cmp("A", "B", "tie", 2), ["A", "B"])
    assert w.tolist() == [[0.0, 2.0], [1.0, 0.0]]  # A: 1 + 0.5·2, B: 0.5·2
    scores = fit_scores(w, prior=0.0)
    assert scores[0] - scores[1] == pytest.approx(math.log(2.0), abs=1e-8)


def _neg_log_likelihood(theta: np.ndarray, w: np.ndarray) -> float:
    diff = theta[:, None] - theta[None, :]
    return float(-(w * (diff - np.logaddexp(0.0, diff))).sum())


def test_mm_fit_matches_a_scipy_optimised_likelihood_with_the_same_prior() -> None:
    rng = np.random.default_rng(7)
    names = ["m0", "m1", "m2", "m3"]
    strengths = {"m0": 1.2, "m1": 0.4, "m2": 0.0, "m3": -1.0}
    data: list[Comparison] = []
    for _ in range(120):
        i, j = rng.choice(4, size=2, replace=False)
        a, b = names[i], names[j]
        p = 1 / (1 + math.exp(strengths[b] - strengths[a]))
        u = rng.random()
        data.append(Comparison(a, b, "tie" if abs(u - p) < 0.05 else "a" if u < p else "b"))
    prior = 0.1
    w = win_matrix(data, names)
    ours = fit_scores(w, prior=prior)
    padded = w + (prior / 2) * (1 - np.eye(4))
    best = minimize(_neg_log_likelihood, np.zeros(4), args=(padded,), method="BFGS", tol=1e-12)
    theirs = best.x - best.x.mean()
    assert np.allclose(ours, theirs, atol=1e-4), (ours, theirs)
    assert list(np.argsort(-ours)) == [0, 1, 2, 3]


def test_a_model_that_never_won_keeps_a_finite_score_through_the_prior() -> None:
    scores = fit_scores(win_matrix(_cmp("A", "B", "a", 5), ["A", "B"]), prior=0.1)
    assert np.all(np.isfinite(scores)) and scores[0] > scores[1]
    # with 0.05 virtual wins each way: p_A / p_B = 5.05 / 0.05
    assert scores[0] - scores[1] == pytest.approx(math.log(5.05 / 0.05), abs=1e-6)


def test_technical_tie_is_a_difference_below_the_mean_half_width() -> None:
    scores = np.array([0.0, 0.1, 1.0])
    intervals = np.array([[-0.2, 0.2], [-0.1, 0.3], [0.9, 1.1]])  # half-widths .2, .2, .1
    ties = technical_ties(["a", "b", "c"], scores, intervals)
    assert ties == {"a": ("b",), "b": ("a",), "c": ()}
    # b-c: |0.9| vs (0.2 + 0.1) / 2 = 0.15 → no tie; a boundary case is not a tie (strict <)
    edge = technical_ties(["x", "y"], np.array([0.0, 0.2]), np.array([[-0.2, 0.2], [0.0, 0.4]]))
    assert edge == {"x": (), "y": ()}


def test_rank_marks_preliminary_models_and_counts_the_confrontation_matrix() -> None:
    data = (
        _cmp("A", "B", "a", 4)
        + _cmp("A", "B", "tie", 1)
        + _cmp("B", "A", "a", 1)
        + _cmp("A", "C", "a", 2)
    )
    result = rank(data, min_comparisons=5, resamples=200, seed=3)
    by = {m.model: m for m in result.models}
    assert [m.model for m in result.models] == ["A", "B", "C"]
    assert (by["A"].wins, by["A"].ties, by["A"].losses, by["A"].comparisons) == (6, 1, 1, 8)
    assert (by["B"].wins, by["B"].ties, by["B"].losses) == (1, 1, 4)
    assert (by["C"].comparisons, by["C"].preliminary) == (2, True)
    assert not by["A"].preliminary and not by["B"].preliminary
    assert result.matrix["A"]["B"] == (4, 1, 1)
    assert result.matrix["B"]["A"] == (1, 1, 4)
    assert result.matrix["C"]["A"] == (0, 0, 2)
    assert "C" not in result.matrix["B"]
    for m in result.models:
        lo, hi = m.interval
        assert lo <= m.score <= hi
        assert m.elo == pytest.approx(1500 + 400 * m.score / math.log(10))
    again = rank(data, min_comparisons=5, resamples=200, seed=3)
    assert [m.interval for m in again.models] == [m.interval for m in result.models]


def test_equal_models_are_a_technical_tie_and_a_clear_gap_is_not() -> None:
    data = _cmp("A", "B", "a", 10) + _cmp("A", "B", "b", 10) + _cmp("A", "C", "a", 20)
    data += _cmp("B", "C", "a", 20)
    result = rank(data, resamples=300, seed=1)
    by = {m.model: m for m in result.models}
    assert by["A"].tied_with == ("B",) and by["B"].tied_with == ("A",)
    assert by["C"].tied_with == () and by["C"].rank == 3


def test_the_batched_bootstrap_equals_refitting_each_resample_one_by_one() -> None:
    data = _cmp("A", "B", "a", 3) + _cmp("B", "C", "tie", 2) + _cmp("C", "A", "a", 2)
    data += _cmp("A", "C", "b", 1) + _cmp("B", "A", "a", 2)
    names = ["A", "B", "C"]
    got = bootstrap_intervals(data, names, resamples=60, seed=11)
    picks = np.random.default_rng(11).integers(0, len(data), size=(60, len(data)))
    draws = np.array([fit_scores(win_matrix([data[i] for i in row], names)) for row in picks])
    assert np.allclose(got, np.percentile(draws, [2.5, 97.5], axis=0).T, atol=1e-8)
