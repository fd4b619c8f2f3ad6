"""Paired comparisons and Bradley-Terry strengths from per-item outcomes (pure numpy).

Input is a *slot matrix* ``S`` of shape (models, slots): one slot per (item, repeat) of a task
version, 1.0 = pass, 0.0 = fail, NaN = no decided run. Model ``i`` beats model ``j`` on a slot when
``i`` passed and ``j`` failed; slots where both passed or both failed carry no ordering information
and are left out of Bradley-Terry (they are shown in the paired table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judges.pairwise.bradley_terry import CONVENTION, technical_ties
from judges.pairwise.bradley_terry import elo as elo
from service.reports.stats import mcnemar_exact, percentile_interval

FloatArray = npt.NDArray[np.float64]
BT_METHOD = (
    "Bradley-Terry fitted by Newton's method on per-item pairwise outcomes (a pass beats a fail "
    "on the same item and repeat; equal results are ties and carry no information); each ordered "
    "pair of models gets {prior} virtual wins so strengths stay finite; intervals are percentile "
    "bootstrap intervals over items ({resamples} resamples)."
)
ELO_NOTE = (
    f"Elo-scale readout, a robustness view of the same fit (not a separate rating). {CONVENTION}"
)


@dataclass(frozen=True)
class PairCounts:
    """Per pair of models (matrices of shape (models, models)): the 2x2 table on shared slots."""

    both: FloatArray
    only_row: FloatArray
    neither: FloatArray
    undecided: FloatArray
    """Slots where both models have a run but at least one of them is not decided."""


def pair_counts(decided: FloatArray, present: npt.NDArray[np.bool_]) -> PairCounts:
    """Count, for every pair of models, both pass / only the row model / neither on shared slots."""
    p = (decided == 1.0).astype(np.float64)
    f = (decided == 0.0).astype(np.float64)
    h = present.astype(np.float64)
    d = p + f
    return PairCounts(both=p @ p.T, only_row=p @ f.T, neither=f @ f.T, undecided=h @ h.T - d @ d.T)


def caution(only_a: int, only_b: int, pairs: int, has_repeats: bool) -> str | None:
    """A plain-language warning when a paired comparison cannot say much."""
    notes: list[str] = []
    discordant = only_a + only_b
    if pairs == 0:
        return "No shared decided items: these two cannot be compared."
    if discordant < 10:
        notes.append(
            f"Only {discordant} items separate them ({only_a} vs {only_b}); with so few the test "
            "can detect only very large differences, and a high p does not mean they are equal."
        )
    elif pairs < 30:
        notes.append("Fewer than 30 paired items: read the difference as indicative only.")
    if has_repeats:
        notes.append(
            "Repeats of one item are paired as separate items but are not independent, so the "
            "p-value is optimistic."
        )
    return " ".join(notes) or None


def paired_table(
    models: list[str], decided: FloatArray, present: npt.NDArray[np.bool_], has_repeats: bool
) -> list[dict[str, object]]:
    """Every pair of models that answered a common item: the 2x2 table and the exact McNemar p.

    Pairs that never answered the same item (no shared slot at all) are left out.
    """
    counts = pair_counts(decided, present)
    out: list[dict[str, object]] = []
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            both, neither = int(counts.both[a, b]), int(counts.neither[a, b])
            only_a, only_b = int(counts.only_row[a, b]), int(counts.only_row[b, a])
            pairs = both + neither + only_a + only_b
            if pairs == 0 and int(counts.undecided[a, b]) == 0:
                continue
            out.append(
                {
                    "model_a": models[a],
                    "model_b": models[b],
                    "both_pass": both,
                    "only_a": only_a,
                    "only_b": only_b,
                    "neither": neither,
                    "pairs": pairs,
                    "excluded_undecided": int(counts.undecided[a, b]),
                    "mcnemar_p": mcnemar_exact(only_a, only_b),
                    "caution": caution(only_a, only_b, pairs, has_repeats),
                }
            )
    return out


def fit_bradley_terry(
    wins: FloatArray,
    prior: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 100,
    init: FloatArray | None = None,
) -> FloatArray:
    """Maximum-likelihood log-strengths (centred to mean 0) from a win matrix.

    ``wins[..., i, j]`` = times model i beat model j; leading axes are independent problems (the
    bootstrap fits all resamples at once). Newton's method on the log-likelihood
    ``sum_ij w_ij log sigmoid(t_i - t_j)`` with ``prior`` added to every off-diagonal ``w_ij``;
    steps are capped at 1 in log-strength, which keeps early iterations safe.
    """
    m = wins.shape[-1]
    off = 1.0 - np.eye(m)
    w = wins + prior * off
    n = w + np.swapaxes(w, -1, -2)
    theta = np.zeros(w.shape[:-1]) if init is None else np.broadcast_to(init, w.shape[:-1]).copy()
    centre = np.full((m, m), 1.0 / m)
    for _ in range(max_iter):
        diff = theta[..., :, None] - theta[..., None, :]
        sig = 1.0 / (1.0 + np.exp(-diff))
        grad = (w - n * sig).sum(-1)
        weight = n * sig * (1.0 - sig) * off
        lap = np.eye(m) * weight.sum(-1)[..., None, :] - weight
        step = np.linalg.solve(lap + centre, grad[..., None])[..., 0]
        biggest = np.abs(step).max(-1, keepdims=True)
        step = step / np.maximum(biggest, 1.0)
        theta = theta + step
        if float(biggest.max()) < tol:
            break
    centred: FloatArray = theta - theta.mean(-1, keepdims=True)
    return centred


def bootstrap_wins(
    decided: FloatArray,
    resamples: int,
    rng: np.random.Generator,
    max_cells: int = 20_000_000,
    weights: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Win matrix of the data and of ``resamples`` bootstrap resamples of the slots.

    Each resample draws slots with replacement; its win matrix is the count-weighted sum of the
    slots' pass-over-fail tables (times the slot ``weights`` when given). Small problems use one
    matrix product over a (slots, models squared) table; when that table would exceed
    ``max_cells`` the resamples are summed one by one.
    """
    m, k = decided.shape
    p = (decided == 1.0).astype(np.float32)
    if weights is not None:
        p = p * weights.astype(np.float32)[None, :]
    f = (decided == 0.0).astype(np.float32)
    point = (p.astype(np.float64) @ f.T.astype(np.float64)).reshape(m, m)
    if resamples == 0 or k == 0:
        return point, np.zeros((resamples, m, m))
    picks = rng.integers(0, k, size=(resamples, k))
    offsets = np.arange(resamples)[:, None] * k
    counts = np.bincount((picks + offsets).ravel(), minlength=resamples * k)
    counts = counts.reshape(resamples, k).astype(np.float32)
    if k * m * m <= max_cells:
        per_slot = (p.T[:, :, None] * f.T[:, None, :]).reshape(k, m * m)
        keep = np.flatnonzero(per_slot.any(1))
        boot = (counts[:, keep] @ per_slot[keep]).astype(np.float64).reshape(resamples, m, m)
        return point, boot
    boot = np.empty((resamples, m, m))
    for b in range(resamples):
        boot[b] = (p * counts[b]) @ f.T
    return point, boot


def _count(value: float, whole: bool) -> float:
    return round(value) if whole else round(value, 3)


def bradley_terry(
    models: list[str],
    decided: FloatArray,
    resamples: int,
    rng: np.random.Generator,
    prior: float = 0.5,
    level: float = 0.95,
    weights: FloatArray | None = None,
) -> dict[str, object]:
    """Strengths, bootstrap intervals, Elo readout and technical ties for the models given.

    Models without any decided slot are listed under ``not_ranked`` and left out of the fit.
    """
    has_data = np.asarray(~np.isnan(decided).all(axis=1), dtype=np.bool_)
    flags = [bool(x) for x in has_data]
    ranked = [mm for mm, ok in zip(models, flags, strict=True) if ok]
    not_ranked = [mm for mm, ok in zip(models, flags, strict=True) if not ok]
    result: dict[str, object] = {
        "method": BT_METHOD.format(prior=prior, resamples=resamples),
        "elo_note": ELO_NOTE,
        "prior_wins": prior,
        "resamples": resamples,
        "not_ranked": not_ranked,
        "models": [],
    }
    if len(ranked) < 2:
        return result
    sub = decided[has_data]
    wins, boot = bootstrap_wins(sub, resamples, rng, weights=weights)
    if not wins.any():
        result["note"] = (
            "not computed: no item was answered by two of these models with different results "
            "(items are paired by their item key)"
        )
        return result
    theta = fit_bradley_terry(wins, prior)
    boot_theta = fit_bradley_terry(boot, prior, tol=1e-7, init=theta) if resamples else None
    intervals: list[tuple[float, float] | None] = [
        percentile_interval(boot_theta[:, i], level) if boot_theta is not None else None
        for i in range(len(ranked))
    ]
    result["models"] = _strength_rows(ranked, theta, intervals, wins, whole=weights is None)
    return result


def _strength_rows(
    ranked: list[str],
    theta: FloatArray,
    intervals: list[tuple[float, float] | None],
    wins: FloatArray,
    *,
    whole: bool,
) -> list[dict[str, object]]:
    """One row per ranked model, strongest first, with its technical ties.

    A technical tie follows the one convention (``judges.pairwise.bradley_terry``): log-strengths
    closer than the mean half-width of the two 95 % intervals. ``whole`` rounds win and loss
    counts to integers (unweighted slots).
    """
    order = sorted(range(len(ranked)), key=lambda i: -theta[i])
    bounds = np.array([iv if iv is not None else (np.nan, np.nan) for iv in intervals], dtype=float)
    ties = technical_ties(ranked, theta, bounds.reshape(len(ranked), 2))
    rows: list[dict[str, object]] = []
    for rank, i in enumerate(order, start=1):
        iv = intervals[i]
        tied = [ranked[j] for j in order if ranked[j] in ties[ranked[i]]]
        rows.append(
            {
                "model": ranked[i],
                "rank": rank,
                "log_strength": float(theta[i]),
                "interval": list(iv) if iv else None,
                "elo": elo(float(theta[i])),
                "elo_interval": [elo(iv[0]), elo(iv[1])] if iv else None,
                "wins": _count(float(wins[i].sum()), whole),
                "losses": _count(float(wins[:, i].sum()), whole),
                "technical_tie": bool(tied),
                "tied_with": tied,
            }
        )
    return rows
