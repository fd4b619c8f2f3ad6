"""Calibrating a judge on a graded criterion: agreement measures fit for ordinal levels.

Levels are ordered but not measured, so a judge that says 4 where people said 5 is closer than
one that says 1, and an error that crosses a rubric bound (``I >= 4``: the judge says 4, people
say 3) matters more than one that does not. Three numbers decide the gate on a graded criterion,
each with a seeded percentile bootstrap interval over items:

- **weighted kappa** (quadratic weights): agreement beyond chance, scaled by how far apart the
  levels are; trusted above ``min_weighted_kappa`` by its lower bound;
- **mean absolute level error**: how many levels off the judge is on average; trusted when its
  upper bound is at most ``max_mean_abs_error``;
- **errors across a bound**: the share of items where the judge's level and the label's sit on
  different sides of a bound of the rubric (a pass by the bound turned into a fail, or the
  reverse), with its Wilson interval; at most ``max_cross_bound_rate``.

Items the judge left without a level (``null``: uncertain) are counted apart; they never count
as agreement. Pure; numpy only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judges.calibration.estimates import Estimate, bootstrap_rate
from judges.calibration.gate import GateDecision
from judges.calibration.trust import Check, combine, rate_check
from regua.records import fields_of

LevelPair = tuple[int, int]
"""``(label level, judge level)`` of one item."""


@dataclass(frozen=True)
class OrdinalThresholds:
    """What a graded judge must reach to vote (each on its interval, see the module text)."""

    min_weighted_kappa: float = 0.6
    max_mean_abs_error: float = 0.75
    max_cross_bound_rate: float = 0.1
    min_items: int = 5

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return fields_of(self)


DEFAULT_ORDINAL = OrdinalThresholds()


@dataclass(frozen=True)
class OrdinalMetrics:
    """A graded judge against the labels' levels on one criterion."""

    items: int
    """Items with a label level and a judge level."""
    unanswered: int
    """Items with a label level the judge gave no level for (uncertain)."""
    weighted_kappa: Estimate
    mean_abs_error: Estimate
    cross_bound_rate: Estimate
    exact_agreement: Estimate
    confusion: Mapping[str, Mapping[str, int]]
    """label level → judge level → count."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "items": self.items,
            "unanswered": self.unanswered,
            "weighted_kappa": self.weighted_kappa.to_dict(),
            "mean_abs_error": self.mean_abs_error.to_dict(),
            "cross_bound_rate": self.cross_bound_rate.to_dict(),
            "exact_agreement": self.exact_agreement.to_dict(),
            "confusion": {k: dict(v) for k, v in self.confusion.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OrdinalMetrics:
        """Inverse of :meth:`to_dict`."""
        return cls(
            items=int(data["items"]),
            unanswered=int(data["unanswered"]),
            weighted_kappa=Estimate.from_dict(data["weighted_kappa"]),
            mean_abs_error=Estimate.from_dict(data["mean_abs_error"]),
            cross_bound_rate=Estimate.from_dict(data["cross_bound_rate"]),
            exact_agreement=Estimate.from_dict(data["exact_agreement"]),
            confusion={
                str(k): {str(j): int(n) for j, n in v.items()}
                for k, v in (data.get("confusion") or {}).items()
            },
        )


def weighted_kappa(pairs: Sequence[LevelPair], scale: tuple[int, int]) -> float | None:
    """Cohen's kappa with quadratic weights over the scale (None when chance explains all)."""
    if not pairs:
        return None
    low, high = scale
    k = high - low + 1
    observed = np.zeros((k, k))
    for a, b in pairs:
        observed[a - low, b - low] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    idx = np.arange(k)
    weights = (idx[:, None] - idx[None, :]) ** 2 / max(1, (k - 1) ** 2)
    disagreement_expected = float((weights * expected).sum())
    if disagreement_expected == 0:
        return None
    return 1.0 - float((weights * observed).sum()) / disagreement_expected


def _bootstrap(
    pairs: Sequence[LevelPair],
    stat: Callable[[Sequence[LevelPair]], float | None],
    *,
    seed: int,
    n_boot: int,
) -> Estimate:
    """A statistic of the pairs with a percentile bootstrap over items, containing its value."""
    if not pairs:
        return Estimate(None, denominator=0)
    value = stat(pairs)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(pairs), size=len(pairs))
        v = stat([pairs[i] for i in idx])
        if v is not None:
            samples.append(v)
    if not samples:
        return Estimate(value, denominator=len(pairs))
    lo, hi = (float(x) for x in np.percentile(np.array(samples), [2.5, 97.5]))
    if value is not None:
        lo, hi = min(lo, value), max(hi, value)
    return Estimate(value, lo, hi, None, len(pairs))


def _mae(pairs: Sequence[LevelPair]) -> float | None:
    return float(np.mean([abs(a - b) for a, b in pairs])) if pairs else None


def ordinal_metrics(
    pairs: Sequence[tuple[int, int | None]],
    scale: tuple[int, int],
    same_side: Callable[[int, int], bool],
    *,
    seed: int = 0,
    n_boot: int = 1000,
) -> OrdinalMetrics:
    """The ordinal measures of ``(label level, judge level or None)`` pairs on one criterion.

    ``same_side(a, b)`` says whether two levels meet the rubric's bounds alike (both pass the
    bounds or both fail them).
    """
    answered = [(a, b) for a, b in pairs if b is not None]
    confusion: dict[str, dict[str, int]] = {}
    for a, b in answered:
        row = confusion.setdefault(str(a), {})
        row[str(b)] = row.get(str(b), 0) + 1
    return OrdinalMetrics(
        items=len(answered),
        unanswered=len(pairs) - len(answered),
        weighted_kappa=_bootstrap(
            answered, lambda p: weighted_kappa(p, scale), seed=seed, n_boot=n_boot
        ),
        mean_abs_error=_bootstrap(answered, _mae, seed=seed + 1, n_boot=n_boot),
        cross_bound_rate=bootstrap_rate(
            [0.0 if same_side(a, b) else 1.0 for a, b in answered],
            [1.0] * len(answered),
            seed=seed + 2,
            n_boot=n_boot,
        ),
        exact_agreement=bootstrap_rate(
            [1.0 if a == b else 0.0 for a, b in answered],
            [1.0] * len(answered),
            seed=seed + 3,
            n_boot=n_boot,
        ),
        confusion=confusion,
    )


def ordinal_checks(m: OrdinalMetrics, t: OrdinalThresholds) -> list[Check]:
    """The gate's checks on a graded criterion (ok, bad or unsure, as for pass/fail)."""
    checks: list[Check] = []
    if m.items < t.min_items:
        checks.append(Check("unsure", f"only {m.items} graded items (need {t.min_items})"))
    kappa = m.weighted_kappa
    if kappa.value is None or kappa.ci_low is None or kappa.ci_high is None:
        checks.append(Check("unsure", "weighted kappa undefined: the labels use one level only"))
    elif kappa.ci_low > t.min_weighted_kappa:
        checks.append(Check("ok"))
    elif kappa.ci_high <= t.min_weighted_kappa:
        text = f"weighted kappa {kappa.value:.2f}: upper 95% bound {kappa.ci_high:.2f}"
        checks.append(Check("bad", f"{text} <= {t.min_weighted_kappa}"))
    else:
        low, high = kappa.ci_low, kappa.ci_high
        text = f"weighted kappa {kappa.value:.2f}: 95% interval [{low:.2f}, {high:.2f}]"
        checks.append(Check("unsure", f"{text} straddles {t.min_weighted_kappa}"))
    mae = m.mean_abs_error
    if mae.value is not None and mae.ci_low is not None and mae.ci_high is not None:
        if mae.ci_low > t.max_mean_abs_error:
            text = f"mean absolute level error {mae.value:.2f}: lower 95% bound {mae.ci_low:.2f}"
            checks.append(Check("bad", f"{text} > {t.max_mean_abs_error}"))
        elif mae.ci_high > t.max_mean_abs_error:
            text = f"mean absolute level error {mae.value:.2f}: upper 95% bound {mae.ci_high:.2f}"
            checks.append(Check("unsure", f"{text} > {t.max_mean_abs_error}"))
    checks.append(
        rate_check(
            "rate of errors across a bound",
            m.cross_bound_rate,
            t.max_cross_bound_rate,
            use_upper=False,
            label="fail",
        )
    )
    return checks


def decide_graded(
    *,
    base: GateDecision,
    metrics: OrdinalMetrics,
    thresholds: OrdinalThresholds = DEFAULT_ORDINAL,
) -> GateDecision:
    """The gate on a graded criterion, re-deciding ``base`` by the ordinal checks.

    ``base`` is the pass/fail decision on the statuses the bounds make of the levels; its
    metrics are kept beside the ordinal ones.
    """
    status, reasons, needs = combine(ordinal_checks(metrics, thresholds))
    return dataclasses.replace(
        base,
        passed=status == "trusted",
        reasons=reasons,
        status=status,
        needs=needs,
        metrics={**base.metrics, "ordinal": metrics.to_dict()},
        thresholds={**base.thresholds, "ordinal": thresholds.to_dict()},
        set_size=None,  # read again from the merged metrics
    )
