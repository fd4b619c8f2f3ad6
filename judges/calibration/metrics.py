"""Reliability metrics of a judge against human labels, each rate with a bootstrap interval.

Conventions (rows = human reference, columns = judge; statuses in :data:`STATUSES` order):

- *missed critical error*: the judge says ``pass`` on a necessary criterion humans failed;
  rate = missed / items humans failed on a necessary criterion;
- *false reject*: the judge says ``fail`` where humans said ``pass``; rate over human passes;
- *uncertain rate*: judge ``uncertain`` over judged items; *judge errors* are counted apart;
- *invariance violation*: on a ``must_not_change`` pair the variant's verdict differs from the
  base's verdict (same judge, same criterion); *sensitivity*: on a ``must_change`` pair it does;
- *repeat agreement*: share of items whose repeated runs all gave the same status.

Macro-F1 averages F1 over the statuses present in either the reference or the judge's answers.
Cohen's kappa is None when chance agreement is 1 (a single status everywhere). Every interval is
a seeded percentile bootstrap (resampling items, or pairs) at 95 %. Accuracy is reported only
next to these numbers, never alone. Pure functions; numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from judges.calibration.sets import STATUSES

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
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "wilson_low": self.wilson_low,
            "wilson_high": self.wilson_high,
        }

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


def _macro_f1(cm: IntArray) -> float | None:
    present = (cm.sum(axis=0) + cm.sum(axis=1)) > 0
    if not present.any():
        return None
    tp = np.diag(cm).astype(float)
    denom = cm.sum(axis=0) + cm.sum(axis=1)
    f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    return float(f1[present].mean())


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
    """Macro-averaged F1 over the statuses present in either sequence."""
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


def bootstrap_pair_stat(
    ref: IntArray,
    pred: IntArray,
    stat: Callable[[IntArray], float | None],
    *,
    seed: int,
    n_boot: int = 1000,
) -> Estimate:
    """A confusion-matrix statistic (macro-F1, kappa) with a percentile bootstrap over items."""
    if len(ref) == 0:
        return Estimate(None, denominator=0)
    value = stat(_cm(ref, pred))
    rng = np.random.default_rng(seed)
    samples: list[float] = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(ref), size=len(ref))
        v = stat(_cm(ref[idx], pred[idx]))
        if v is not None:
            samples.append(v)
    lo, hi = _ci(samples)
    return Estimate(value, lo, hi, None, len(ref))


def f1_estimate(ref: Sequence[str], pred: Sequence[str], *, seed: int, n_boot: int) -> Estimate:
    """Macro-F1 with its bootstrap interval."""
    return bootstrap_pair_stat(encode(ref), encode(pred), _macro_f1, seed=seed, n_boot=n_boot)


def kappa_estimate(a: Sequence[str], b: Sequence[str], *, seed: int, n_boot: int) -> Estimate:
    """Cohen's kappa with its bootstrap interval."""
    return bootstrap_pair_stat(encode(a), encode(b), _kappa, seed=seed, n_boot=n_boot)


@dataclass(frozen=True)
class ScoredItem:
    """One labelled item with the judge's status on each repeat (None = judge error)."""

    item_id: str
    criterion: str
    necessary: bool
    reference: str | None
    statuses: tuple[str | None, ...]
    style_tags: tuple[str, ...] = ()
    relation: str | None = None
    base_item_id: str | None = None

    @property
    def verdict(self) -> str | None:
        """The first repeat that produced a verdict (None when every repeat errored)."""
        return next((s for s in self.statuses if s is not None), None)


@dataclass(frozen=True)
class Metrics:
    """Every reliability number of one judge on one slice of a calibration set."""

    n_items: int
    n_scored: int
    n_disputed: int
    n_judge_errors: int
    confusion: list[list[int]]
    accuracy: Estimate
    macro_f1: Estimate
    kappa: Estimate
    missed_critical: Estimate
    false_reject: Estimate
    uncertain_rate: Estimate
    judge_error_rate: Estimate
    invariance_violation: Estimate
    sensitivity: Estimate
    repeat_agreement: Estimate
    by_style: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    _ESTIMATES = (
        "accuracy",
        "macro_f1",
        "kappa",
        "missed_critical",
        "false_reject",
        "uncertain_rate",
        "judge_error_rate",
        "invariance_violation",
        "sensitivity",
        "repeat_agreement",
    )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the confusion matrix carries its status labels)."""
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_scored": self.n_scored,
            "n_disputed": self.n_disputed,
            "n_judge_errors": self.n_judge_errors,
            "confusion": {"labels": list(STATUSES), "rows": "human", "matrix": self.confusion},
            "by_style": {k: dict(v) for k, v in self.by_style.items()},
        }
        for name in self._ESTIMATES:
            out[name] = getattr(self, name).to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Metrics:
        """Inverse of :meth:`to_dict`."""
        estimates = {name: Estimate.from_dict(data[name]) for name in cls._ESTIMATES}
        return cls(
            n_items=int(data["n_items"]),
            n_scored=int(data["n_scored"]),
            n_disputed=int(data["n_disputed"]),
            n_judge_errors=int(data["n_judge_errors"]),
            confusion=[[int(v) for v in row] for row in data["confusion"]["matrix"]],
            by_style={str(k): dict(v) for k, v in (data.get("by_style") or {}).items()},
            **estimates,
        )


def _label_metrics(scored: Sequence[ScoredItem], seed: int, n_boot: int) -> dict[str, Estimate]:
    pairs = [(s, s.reference, s.verdict) for s in scored]
    ok = [(s, r, v) for s, r, v in pairs if r is not None and v is not None]
    refs = [r for _, r, _ in ok]
    preds = [v for _, _, v in ok]
    crit = [s.necessary and r == "fail" for s, r, _ in ok]
    return {
        "accuracy": bootstrap_rate(
            [float(r == p) for r, p in zip(refs, preds, strict=True)],
            [1.0] * len(refs),
            seed=seed,
            n_boot=n_boot,
        ),
        "macro_f1": f1_estimate(refs, preds, seed=seed + 1, n_boot=n_boot),
        "kappa": kappa_estimate(refs, preds, seed=seed + 2, n_boot=n_boot),
        "missed_critical": bootstrap_rate(
            [float(c and p == "pass") for c, p in zip(crit, preds, strict=True)],
            [float(c) for c in crit],
            seed=seed + 3,
            n_boot=n_boot,
        ),
        "false_reject": bootstrap_rate(
            [float(r == "pass" and p == "fail") for r, p in zip(refs, preds, strict=True)],
            [float(r == "pass") for r in refs],
            seed=seed + 4,
            n_boot=n_boot,
        ),
    }


def _base_pairs(
    judged: Sequence[ScoredItem], base_verdicts: Mapping[str, str | None]
) -> tuple[list[tuple[str | None, str]], list[tuple[str | None, str]]]:
    """(variant verdict, base verdict) pairs for ``must_not_change`` and ``must_change`` items."""
    pairs = [
        (s.relation, s.verdict, base_verdicts.get(s.base_item_id))
        for s in judged
        if s.base_item_id and s.relation in ("must_change", "must_not_change")
    ]
    keep = [(v, b) for rel, v, b in pairs if rel == "must_not_change" and b is not None]
    change = [(v, b) for rel, v, b in pairs if rel == "must_change" and b is not None]
    return keep, change


def _style_metrics(
    scored: Sequence[ScoredItem], seed: int, n_boot: int
) -> dict[str, dict[str, Any]]:
    """The label metrics of each style tag's items, by tag."""
    by_style: dict[str, dict[str, Any]] = {}
    for tag in sorted({t for s in scored for t in s.style_tags}):
        subset = [s for s in scored if tag in s.style_tags]
        sub = _label_metrics(subset, seed, n_boot)
        by_style[tag] = {"n_items": len(subset), **{k: v.to_dict() for k, v in sub.items()}}
    return by_style


def compute_metrics(
    scored: Sequence[ScoredItem],
    base_verdicts: Mapping[str, str | None],
    *,
    seed: int = 0,
    n_boot: int = 1000,
    style_breakdown: bool = True,
) -> Metrics:
    """All metrics of one slice; ``base_verdicts`` maps base item ids to the judge's status."""
    judged = [s for s in scored if s.verdict is not None]
    labelled = [s for s in judged if s.reference is not None]
    main = _label_metrics(scored, seed, n_boot)
    keep, change = _base_pairs(judged, base_verdicts)
    repeated = [s for s in scored if sum(x is not None for x in s.statuses) >= 2]
    by_style = _style_metrics(scored, seed, n_boot) if style_breakdown else {}
    return Metrics(
        n_items=len(scored),
        n_scored=len(labelled),
        n_disputed=sum(1 for s in scored if s.reference is None),
        n_judge_errors=len(scored) - len(judged),
        confusion=confusion_matrix(
            [s.reference for s in labelled if s.reference is not None],
            [s.verdict for s in labelled if s.verdict is not None],
        ),
        uncertain_rate=bootstrap_rate(
            [float(s.verdict == "uncertain") for s in judged],
            [1.0] * len(judged),
            seed=seed + 5,
            n_boot=n_boot,
        ),
        judge_error_rate=bootstrap_rate(
            [float(s.verdict is None) for s in scored],
            [1.0] * len(scored),
            seed=seed + 6,
            n_boot=n_boot,
        ),
        invariance_violation=bootstrap_rate(
            [float(v != b) for v, b in keep], [1.0] * len(keep), seed=seed + 7, n_boot=n_boot
        ),
        sensitivity=bootstrap_rate(
            [float(v != b) for v, b in change], [1.0] * len(change), seed=seed + 8, n_boot=n_boot
        ),
        repeat_agreement=bootstrap_rate(
            [float(len({x for x in s.statuses if x is not None}) == 1) for s in repeated],
            [1.0] * len(repeated),
            seed=seed + 9,
            n_boot=n_boot,
        ),
        by_style=by_style,
        **main,
    )
