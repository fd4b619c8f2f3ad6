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


def _class_f1(cm: IntArray) -> npt.NDArray[np.float64]:
    tp = np.diag(cm).astype(float)
    denom = cm.sum(axis=0) + cm.sum(axis=1)
    return np.asarray(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0))


def _macro_f1_over(cm: IntArray, classes: npt.NDArray[np.bool_]) -> float | None:
    if not classes.any():
        return None
    return float(_class_f1(cm)[classes].mean())


def _reference_classes(cm: IntArray) -> npt.NDArray[np.bool_]:
    return np.asarray(cm.sum(axis=1) > 0)


def _macro_f1(cm: IntArray) -> float | None:
    return _macro_f1_over(cm, _reference_classes(cm))


def _kappa(cm: IntArray) -> float | None:
    n = cm.sum()
    if n == 0:
        return None
    po = np.trace(cm) / n
    pe = float((cm.sum(axis=0) * cm.sum(axis=1)).sum()) / float(n * n)
    if pe >= 1.0:
        return None
    return float((po - pe) / (1 - pe))


def macro_f1(reference: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Macro-averaged F1 over the statuses present in the reference (the labels)."""
    return _macro_f1(_cm(encode(reference), encode(predicted)))


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa between two raters (None when undefined)."""
    return _kappa(_cm(encode(a), encode(b)))


def _ci(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    lo, hi = np.percentile(np.array(values), [2.5, 97.5])
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
    lo, hi = _ci([float(r) for r in rates])
    w_lo, w_hi = wilson_interval(float(num.sum()), total)
    return Estimate(float(num.sum()) / total, lo, hi, int(num.sum()), int(total), w_lo, w_hi)


def stratified_indices(ref: IntArray, rng: np.random.Generator) -> IntArray:
    """One stratified resample: within each reference status, as many draws as it has items."""
    parts = [
        rng.choice(np.flatnonzero(ref == c), size=int((ref == c).sum()), replace=True)
        for c in np.unique(ref)
    ]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _contain(
    value: float | None, lo: float | None, hi: float | None
) -> tuple[float | None, float | None]:
    """Widen a percentile interval to contain its point value (it may not, for skewed stats)."""
    if value is None or lo is None or hi is None:
        return lo, hi
    return min(lo, value), max(hi, value)


def bootstrap_pair_stat(
    ref: IntArray,
    pred: IntArray,
    stat: Callable[[IntArray], float | None],
    *,
    seed: int,
    n_boot: int = 1000,
) -> Estimate:
    """A confusion-matrix statistic with a stratified percentile bootstrap over items."""
    if len(ref) == 0:
        return Estimate(None, denominator=0)
    value = stat(_cm(ref, pred))
    rng = np.random.default_rng(seed)
    samples: list[float] = []
    for _ in range(n_boot):
        idx = stratified_indices(ref, rng)
        v = stat(_cm(ref[idx], pred[idx]))
        if v is not None:
            samples.append(v)
    lo, hi = _contain(value, *_ci(samples))
    return Estimate(value, lo, hi, None, len(ref))


def f1_estimate(ref: Sequence[str], pred: Sequence[str], *, seed: int, n_boot: int) -> Estimate:
    """Macro-F1 over the reference's statuses, with its stratified bootstrap interval."""
    r, p = encode(ref), encode(pred)
    classes = _reference_classes(_cm(r, p))
    return bootstrap_pair_stat(
        r, p, lambda cm: _macro_f1_over(cm, classes), seed=seed, n_boot=n_boot
    )


def _f1_of(k: int) -> Callable[[IntArray], float | None]:
    def stat(cm: IntArray) -> float | None:
        return float(_class_f1(cm)[k])

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
    return bootstrap_pair_stat(encode(a), encode(b), _kappa, seed=seed, n_boot=n_boot)
