"""Small, pure statistics used by the reports (numbers in, numbers out; no I/O).

Each function states its method, because a report prints that method next to the number.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

RANGE_LABEL = "range from pending labels, not a confidence interval"
PERCENTILE_METHOD = (
    "nearest rank: the smallest value with at least p % of the values at or below it"
)
BOOTSTRAP_METHOD = (
    "percentile bootstrap over items (each item resampled with all its repeats), "
    "statistic = passes / decided runs"
)


@dataclass(frozen=True)
class PassRange:
    """Pass rate bounds from pending labels (lower: pending counted as fail, upper: as pass)."""

    lower: float | None
    upper: float | None

    def text(self) -> str:
        """Human wording, e.g. ``between 72 % and 82 %``."""
        if self.lower is None or self.upper is None:
            return "no runs with a result"
        if self.lower == self.upper:
            return f"{format_pct(self.lower)}"
        return f"between {format_pct(self.lower)} and {format_pct(self.upper)}"


def format_pct(value: float | None, digits: int = 0) -> str:
    """``0.72`` → ``72 %`` (``n/a`` for None); rounds half away from zero at ``digits``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    scaled = round(value * 100, digits)
    text = f"{scaled:.{digits}f}"
    return f"{text} %"


def pass_range(passes: int, fails: int, pending: int) -> PassRange:
    """Bounds of the pass rate over pass + fail + pending runs (``incomplete`` excluded).

    72 pass, 18 fail, 10 pending → lower 0.72 (pending as fail), upper 0.82 (pending as pass).
    """
    total = passes + fails + pending
    if total == 0:
        return PassRange(None, None)
    return PassRange(passes / total, (passes + pending) / total)


def decided_rate(passes: int, fails: int) -> float | None:
    """Passes / (passes + fails); None when nothing is decided."""
    decided = passes + fails
    return passes / decided if decided else None


def rng_for(seed: int, *parts: str) -> np.random.Generator:
    """A generator derived from the stored seed and a stable key (crc32 of each part).

    Each figure gets its own stream, so adding a model never changes another model's interval.
    """
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def bootstrap_ratio_draws(
    item_passes: IntArray, item_decided: IntArray, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Bootstrap draws of sum(passes) / sum(decided) resampling items with replacement.

    Items with the same (passes, decided) pair are interchangeable for this statistic, so drawing
    how many times each *kind* of item is picked (a multinomial with the kinds' frequencies) has
    exactly the distribution of drawing items one by one, at a fraction of the cost. A draw with no
    decided run is NaN.
    """
    n = int(item_passes.size)
    if n == 0:
        return np.full(resamples, np.nan)
    width = int(item_decided.max()) + 1
    kinds, counts = np.unique(item_passes * width + item_decided, return_counts=True)
    draws = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
    num = draws @ (kinds // width).astype(np.float64)
    den = draws @ (kinds % width).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def percentile_interval(draws: FloatArray, level: float = 0.95) -> tuple[float, float] | None:
    """Equal-tailed percentile interval of the finite draws (None when fewer than half finite)."""
    finite = draws[np.isfinite(draws)]
    if finite.size == 0 or finite.size < draws.size / 2:
        return None
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(finite, [tail, 1.0 - tail])
    return float(lo), float(hi)


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p of ``k`` successes in ``n`` fair coin flips (doubling the smaller tail).

    This is the exact McNemar test when ``k`` and ``n - k`` are the two discordant counts.
    Computed in log space, so large ``n`` neither overflows nor loses the tail.
    """
    if n <= 0:
        return 1.0
    m = min(k, n - k)
    if 2 * m == n:
        return 1.0
    ks = np.arange(1, m + 1, dtype=np.float64)
    # log C(n, k) built up as a running sum of log((n - k + 1) / k); C(n, 0) = 1
    log_comb = np.concatenate(([0.0], np.cumsum(np.log((n - ks + 1.0) / ks))))
    log_terms = log_comb - n * math.log(2.0)
    top = float(log_terms.max())
    tail = math.exp(top) * float(np.exp(log_terms - top).sum())
    return min(1.0, 2.0 * tail)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Exact McNemar p: two-sided binomial test (p = 1/2) on the discordant pairs."""
    return binomial_two_sided_p(only_a, only_a + only_b)


def nearest_rank(sorted_values: FloatArray, percent: float) -> float | None:
    """Nearest-rank percentile of already sorted values: the value at rank ceil(p/100 · n)."""
    n = int(sorted_values.size)
    if n == 0:
        return None
    rank = max(1, math.ceil(percent / 100.0 * n - 1e-9))
    return float(sorted_values[min(rank, n) - 1])
