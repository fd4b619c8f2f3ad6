"""Bradley-Terry strengths from pairwise results, with bootstrap intervals and an Elo readout.

Pure numpy. Each comparison is (a, b, result) with result ``a``, ``b`` or ``tie``; a tie counts
as half a win for each side. Strengths are the maximum-likelihood fit (Newton's method on the
concave log-likelihood), with ``prior`` virtual ties between every pair of models so that a model
that never won keeps a finite score and every model is connected. The score is
``log p`` centred on 0 (geometric mean 1); the Elo readout is ``1500 + 400 · log10 p``.
Intervals are percentile intervals of a seeded bootstrap over comparisons.

Two models are a *technical tie* when their scores differ by less than the mean half-width of
their two intervals; a model with fewer than ``min_comparisons`` comparisons is *preliminary*.

This module holds the one ranking convention of regua (:data:`CONVENTION`): the main report's
Bradley-Terry (``service.reports.ranking``) and every pairwise ranking read Elo and technical ties
from here, and state :data:`CONVENTION` wherever they show them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judges.pairwise.model import Result

FloatArray = npt.NDArray[np.float64]
ELO_ANCHOR = 1500.0
ELO_SCALE = 400.0
PRIOR = 0.1
"""Virtual ties per pair of models in a pairwise fit."""
CONVENTION = (
    "Elo = 1500 + 400 · log10(strength / geometric mean of the strengths): 1500 is the average "
    "model and 400 points are a tenfold strength. Technical tie: two models whose log-strengths "
    "differ by less than the mean half-width of their two 95 % intervals."
)
"""The one ranking convention, stated on every page and file that shows Elo or ties."""


@dataclass(frozen=True)
class Comparison:
    """One decided comparison of model ``a`` with model ``b``."""

    a: str
    b: str
    result: Result


@dataclass(frozen=True)
class RankedModel:
    """A model's place in the ranking."""

    rank: int
    model: str
    score: float
    """Bradley-Terry log-strength, centred on 0."""
    interval: tuple[float, float]
    elo: float
    elo_interval: tuple[float, float]
    comparisons: int
    wins: int
    ties: int
    losses: int
    preliminary: bool
    tied_with: tuple[str, ...]
    """Models this one is in a technical tie with."""


@dataclass(frozen=True)
class Ranking:
    """The fitted ranking and the confrontation matrix."""

    models: tuple[RankedModel, ...]
    matrix: dict[str, dict[str, tuple[int, int, int]]]
    """matrix[a][b] = (wins of a over b, ties, losses of a to b)."""
    resamples: int
    seed: int
    min_comparisons: int


def win_matrix(comparisons: Sequence[Comparison], names: Sequence[str]) -> FloatArray:
    """W[i, j] = wins of model i over model j, a tie counting half for each."""
    index = {n: i for i, n in enumerate(names)}
    w = np.zeros((len(names), len(names)))
    for c in comparisons:
        i, j = index[c.a], index[c.b]
        if c.result == "a":
            w[i, j] += 1.0
        elif c.result == "b":
            w[j, i] += 1.0
        else:
            w[i, j] += 0.5
            w[j, i] += 0.5
    return w


def fit_many(
    wins: FloatArray, prior: float = 0.1, tol: float = 1e-10, max_iter: int = 200
) -> FloatArray:
    """Bradley-Terry log-strengths (centred) of a stack of win matrices (R, k, k) -> (R, k).

    Newton's method on the concave log-likelihood ``sum w_ij log sigmoid(theta_i - theta_j)``
    (with ``prior`` virtual ties per pair), the centring fixing the free translation; steps are
    capped, so a model far from the others converges without overshooting. All matrices step
    together.
    """
    k = wins.shape[-1]
    w = wins + (prior / 2.0) * (1.0 - np.eye(k))
    n = w + np.swapaxes(w, -1, -2)
    theta = np.zeros(wins.shape[:-1])
    centre = np.ones((k, k)) / k
    eye = np.eye(k)
    won = w.sum(axis=-1)
    for _ in range(max_iter):
        prob = 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))  # P(i beats j)
        grad = won - (n * prob).sum(axis=-1)
        curv = n * prob * np.swapaxes(prob, -1, -2)
        info = curv.sum(axis=-1)[..., :, None] * eye - curv + centre
        step = np.clip(np.linalg.solve(info, grad[..., None])[..., 0], -2.0, 2.0)
        theta = theta + step
        theta -= theta.mean(axis=-1, keepdims=True)
        if float(np.max(np.abs(step))) < tol:
            break
    out: FloatArray = theta
    return out


def fit_scores(wins: FloatArray, prior: float = 0.1) -> FloatArray:
    """Bradley-Terry log-strengths (centred) of one win matrix (see :func:`fit_many`)."""
    out: FloatArray = fit_many(wins[None, :, :], prior)[0]
    return out


def elo(score: float) -> float:
    """The Elo readout of a log-strength: 1500 + 400 · log10(p)."""
    return ELO_ANCHOR + ELO_SCALE * score / math.log(10.0)


def bootstrap_intervals(
    comparisons: Sequence[Comparison],
    names: Sequence[str],
    resamples: int,
    seed: int,
    prior: float = 0.1,
) -> FloatArray:
    """(models, 2) percentile 95 % intervals of the scores, resampling comparisons."""
    rng = np.random.default_rng(seed)
    n, k = len(comparisons), len(names)
    index = {name: i for i, name in enumerate(names)}
    # each comparison adds `value` to W[row, col] (a tie adds 0.5 to both directions)
    rows, cols, vals, owner = [], [], [], []
    for c_i, c in enumerate(comparisons):
        i, j = index[c.a], index[c.b]
        cells = {"a": [(i, j, 1.0)], "b": [(j, i, 1.0)], "tie": [(i, j, 0.5), (j, i, 0.5)]}
        for r, col, v in cells[c.result]:
            rows.append(r)
            cols.append(col)
            vals.append(v)
            owner.append(c_i)
    picks = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.arange(resamples)[:, None], picks), 1.0)
    wins = np.zeros((resamples, k, k))
    own = np.array(owner)
    np.add.at(
        wins,
        (np.arange(resamples)[:, None], np.array(rows)[None, :], np.array(cols)[None, :]),
        counts[:, own] * np.array(vals)[None, :],
    )
    draws = fit_many(wins, prior)
    out: FloatArray = np.percentile(draws, [2.5, 97.5], axis=0).T
    return out


def technical_ties(
    names: Sequence[str], scores: FloatArray, intervals: FloatArray
) -> dict[str, tuple[str, ...]]:
    """For each model, the models whose score is closer than their mean interval half-width.

    A model without an interval (NaN bounds) is in no technical tie.
    """
    half = (intervals[:, 1] - intervals[:, 0]) / 2.0
    out: dict[str, tuple[str, ...]] = {}
    for i, name in enumerate(names):
        out[name] = tuple(
            other
            for j, other in enumerate(names)
            if j != i and bool(abs(scores[i] - scores[j]) < (half[i] + half[j]) / 2.0)
        )
    return out


def confrontation(
    comparisons: Sequence[Comparison], names: Sequence[str]
) -> dict[str, dict[str, tuple[int, int, int]]]:
    """matrix[a][b] = (wins of a over b, ties, losses) for every ordered pair that met."""
    counts: dict[str, dict[str, list[int]]] = {n: {} for n in names}
    for c in comparisons:
        for me, other, mine in ((c.a, c.b, "a"), (c.b, c.a, "b")):
            cell = counts[me].setdefault(other, [0, 0, 0])
            cell[0 if c.result == mine else 1 if c.result == "tie" else 2] += 1
    return {a: {b: (v[0], v[1], v[2]) for b, v in row.items()} for a, row in counts.items()}


def rank(
    comparisons: Sequence[Comparison],
    *,
    min_comparisons: int = 20,
    resamples: int = 500,
    seed: int = 0,
    prior: float = 0.1,
) -> Ranking:
    """Fit, bootstrap and rank the models of ``comparisons`` (best first)."""
    names = sorted({c.a for c in comparisons} | {c.b for c in comparisons})
    if not names:
        return Ranking((), {}, resamples, seed, min_comparisons)
    scores = fit_scores(win_matrix(comparisons, names), prior)
    intervals = bootstrap_intervals(comparisons, names, resamples, seed, prior)
    ties = technical_ties(names, scores, intervals)
    matrix = confrontation(comparisons, names)
    order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))
    rows = []
    for place, i in enumerate(order, start=1):
        name = names[i]
        w, t, lo = (sum(cell[k] for cell in matrix[name].values()) for k in range(3))
        lo_s, hi_s = float(intervals[i, 0]), float(intervals[i, 1])
        rows.append(
            RankedModel(
                rank=place,
                model=name,
                score=float(scores[i]),
                interval=(lo_s, hi_s),
                elo=elo(float(scores[i])),
                elo_interval=(elo(lo_s), elo(hi_s)),
                comparisons=w + t + lo,
                wins=w,
                ties=t,
                losses=lo,
                preliminary=w + t + lo < min_comparisons,
                tied_with=ties[name],
            )
        )
    return Ranking(tuple(rows), matrix, resamples, seed, min_comparisons)
