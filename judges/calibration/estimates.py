"""Estimates with intervals: confusion matrices, macro-F1, kappa, rates and their bootstraps.

Rates of counts are ratios of sums with a seeded percentile bootstrap over units, and carry the
Wilson score interval too. Confusion-matrix statistics (macro-F1, kappa) use a *stratified*
bootstrap: each resample draws, within every reference status, as many items as that status
has, so no class appears or vanishes between resamples. Macro-F1 averages F1 over the statuses
the reference (the labels) uses: a status only the judge said (one ``uncertain``) is reported
in the per-class F1 but does not drag the average down as a class of its own. Every interval
is widened, if needed, to contain its point value. Pure functions; numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judges.calibration.sets import STATUSES
from regua.records import fields_of

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
_INDEX = {s: i for i, s in enumerate(STATUSES)}
_K = len(STATUSES)


@dataclass(frozen=True)
class Estimate:
    """A point value with its bootstrap 95 % interval (None when undefined).

    Rates of counts also carry the Wilson score 95 % interval: with few events a percentile
    bootstrap collapses (0 misses out of 6 resamples to [0, 0]); Wilson does not ([0, 0.39]).
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    numerator: int | None = None
    denominator: int | None = None
    wilson_low: float | None = None
    wilson_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return fields_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Estimate:
        """Inverse of :meth:`to_dict`."""

        def f(key: str) -> float | None:
            v = data.get(key)
            return None if v is None else float(v)

        def i(key: str) -> int | None:
            v = data.get(key)
            return None if v is None else int(v)

        return cls(
            f("value"),
            f("ci_low"),
            f("ci_high"),
            i("numerator"),
            i("denominator"),
            f("wilson_low"),
            f("wilson_high"),
        )


def encode(statuses: Sequence[str]) -> IntArray:
    """Statuses as integer codes (index in :data:`STATUSES`)."""
    return np.array([_INDEX[s] for s in statuses], dtype=np.int64)


def _cm(ref: IntArray, pred: IntArray) -> IntArray:
    return np.bincount(ref * _K + pred, minlength=_K * _K).reshape(_K, _K)


def confusion_matrix(reference: Sequence[str], predicted: Sequence[str]) -> list[list[int]]:
    """4x4 counts: rows = reference status, columns = predicted status (STATUSES order)."""
    return [[int(v) for v in row] for row in _cm(encode(reference), encode(predicted))]


def _present(cm: IntArray) -> npt.NDArray[np.bool_]:
    return np.asarray((cm.sum(axis=0) + cm.sum(axis=1)) > 0)


def _class_f1(cms: IntArray) -> FloatArray:
    """F1 of every status, of one confusion matrix or of a stack of them (..., K, K)."""
    tp = np.diagonal(cms, axis1=-2, axis2=-1).astype(float)
    denom = cms.sum(axis=-2) + cms.sum(axis=-1)
    return np.asarray(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0))


def _macro_f1_over(cms: IntArray, classes: npt.NDArray[np.bool_]) -> FloatArray:
    """Macro-F1 over ``classes`` of each matrix of a stack (NaN when no class is given)."""
    if not classes.any():
        return np.full(cms.shape[:-2], np.nan)
    return np.asarray(_class_f1(cms)[..., classes].mean(axis=-1))


def _reference_classes(cm: IntArray) -> npt.NDArray[np.bool_]:
    return np.asarray(cm.sum(axis=1) > 0)


def _kappas(cms: IntArray) -> FloatArray:
    """Cohen's kappa of each matrix of a stack (NaN where undefined)."""
    n = cms.sum(axis=(-2, -1))
    po = np.trace(cms, axis1=-2, axis2=-1) / np.maximum(n, 1)
    pe = (cms.sum(axis=-2) * cms.sum(axis=-1)).sum(axis=-1) / np.maximum(n * n, 1)
    defined = (n > 0) & (pe < 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(defined, (po - pe) / (1 - pe), np.nan))


def _scalar(values: FloatArray) -> float | None:
    """The one value of a statistic of a single matrix (None when undefined)."""
    v = float(values)
    return None if math.isnan(v) else v


def macro_f1(reference: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Macro-averaged F1 over the statuses present in the reference (the labels)."""
    cm = _cm(encode(reference), encode(predicted))
    return _scalar(_macro_f1_over(cm, _reference_classes(cm)))


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa between two raters (None when undefined)."""
    return _scalar(_kappas(_cm(encode(a), encode(b))))


def _ci(values: FloatArray) -> tuple[float | None, float | None]:
    if not len(values):
        return None, None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def wilson_interval(successes: float, n: float, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion (95 % by default); ``n`` must be positive."""
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_rate(
    numerators: Sequence[float], denominators: Sequence[float], *, seed: int, n_boot: int = 1000
) -> Estimate:
    """Ratio of sums with a percentile bootstrap over units (None when the denominator is 0)."""
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    total = float(den.sum())
    if len(num) == 0 or total == 0:
        return Estimate(None, numerator=int(num.sum()), denominator=int(total))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(num), size=(n_boot, len(num)))
    dens = den[idx].sum(axis=1)
    rates = num[idx].sum(axis=1)[dens > 0] / dens[dens > 0]
    lo, hi = _ci(rates)
    w_lo, w_hi = wilson_interval(float(num.sum()), total)
    return Estimate(float(num.sum()) / total, lo, hi, int(num.sum()), int(total), w_lo, w_hi)


def stratified_indices(ref: IntArray, rng: np.random.Generator) -> IntArray:
    """One stratified resample: within each reference status, as many draws as it has items."""
    return _stratified_resamples(ref, rng, 1).reshape(-1)


_CHUNK_DRAWS = 1 << 20
"""Draws per block of resamples: bounds the memory of a bootstrap over a large set."""


def _stratified_resamples(ref: IntArray, rng: np.random.Generator, count: int) -> IntArray:
    """``count`` stratified resamples at once, one per row.

    Draws exactly what ``count`` rounds of ``rng.choice(items of status c, their number)`` per
    status (in status order) draw from ``rng``: one bounded-integer call with the bounds of
    every draw in that order consumes the generator's stream as those calls do, so a seed gives
    the same resamples (and intervals) as a loop of per-status choices.
    """
    members = [np.flatnonzero(ref == c) for c in np.unique(ref)]
    if not members:
        return np.zeros((count, 0), dtype=np.int64)
    sizes = np.array([len(m) for m in members], dtype=np.int64)
    flat = np.concatenate(members).astype(np.int64)
    highs = np.repeat(sizes, sizes)
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    draws = rng.integers(0, np.tile(highs, count), dtype=np.int64).reshape(count, len(ref))
    return np.asarray(flat[draws + starts])


def _contain(
    value: float | None, lo: float | None, hi: float | None
) -> tuple[float | None, float | None]:
    """Widen a percentile interval to contain its point value (it may not, for skewed stats)."""
    if value is None or lo is None or hi is None:
        return lo, hi
    return min(lo, value), max(hi, value)


def _resampled_cms(ref: IntArray, pred: IntArray, idx: IntArray) -> IntArray:
    """The confusion matrix of every resample (rows of ``idx``), stacked (B, K, K)."""
    count = idx.shape[0]
    codes = ref[idx] * _K + pred[idx] + (np.arange(count, dtype=np.int64) * _K * _K)[:, None]
    return np.bincount(codes.ravel(), minlength=count * _K * _K).reshape(count, _K, _K)


def bootstrap_pair_stat(
    ref: IntArray,
    pred: IntArray,
    stat: Callable[[IntArray], FloatArray],
    *,
    seed: int,
    n_boot: int = 1000,
) -> Estimate:
    """A confusion-matrix statistic with a stratified percentile bootstrap over items.

    ``stat`` maps a stack of confusion matrices (..., K, K) to their values (NaN where
    undefined); the resamples are drawn and counted in blocks, not one by one.
    """
    if len(ref) == 0:
        return Estimate(None, denominator=0)
    value = _scalar(stat(_cm(ref, pred)))
    rng = np.random.default_rng(seed)
    per_block = max(1, _CHUNK_DRAWS // len(ref))
    blocks: list[FloatArray] = []
    for start in range(0, n_boot, per_block):
        idx = _stratified_resamples(ref, rng, min(per_block, n_boot - start))
        blocks.append(stat(_resampled_cms(ref, pred, idx)))
    samples = np.concatenate(blocks) if blocks else np.zeros(0)
    lo, hi = _contain(value, *_ci(samples[~np.isnan(samples)]))
    return Estimate(value, lo, hi, None, len(ref))


def f1_estimate(ref: Sequence[str], pred: Sequence[str], *, seed: int, n_boot: int) -> Estimate:
    """Macro-F1 over the reference's statuses, with its stratified bootstrap interval."""
    r, p = encode(ref), encode(pred)
    classes = _reference_classes(_cm(r, p))
    return bootstrap_pair_stat(
        r, p, lambda cms: _macro_f1_over(cms, classes), seed=seed, n_boot=n_boot
    )


def _f1_of(k: int) -> Callable[[IntArray], FloatArray]:
    def stat(cms: IntArray) -> FloatArray:
        return np.asarray(_class_f1(cms)[..., k])

    return stat


def per_class_f1(
    ref: Sequence[str], pred: Sequence[str], *, seed: int, n_boot: int
) -> dict[str, Estimate]:
    """F1 of each status present in either sequence, each with its stratified interval."""
    r, p = encode(ref), encode(pred)
    present = _present(_cm(r, p))
    out: dict[str, Estimate] = {}
    for k, status in enumerate(STATUSES):
        if present[k]:
            out[status] = bootstrap_pair_stat(r, p, _f1_of(k), seed=seed + k, n_boot=n_boot)
    return out


def kappa_estimate(a: Sequence[str], b: Sequence[str], *, seed: int, n_boot: int) -> Estimate:
    """Cohen's kappa with its bootstrap interval."""
    return bootstrap_pair_stat(encode(a), encode(b), _kappas, seed=seed, n_boot=n_boot)
