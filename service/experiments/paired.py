"""Pure statistics of an experiment's report: paired tables, McNemar, bootstrap, latency, cost.

Numbers in, numbers out (numpy only, no I/O). Each function states its method, because the
report prints it next to the number. A case's ``outcome`` is ``pass``, ``fail``, ``pending``,
``incomplete`` or ``running`` (its run has no outcome yet); only ``pass`` counts as a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass

import numpy as np

from service.reports.stats import (
    FloatArray,
    mcnemar_exact,
    nearest_rank,
    pass_range,
    percentile_interval,
)

OUTCOMES = ("pass", "fail", "pending", "incomplete", "running")
DECIDED = ("pass", "fail")
PAIR_METHOD = (
    "arms paired by (item, repeat); exact McNemar: two-sided binomial test (p = 1/2) on the "
    "discordant pairs; pairs with a pending, incomplete or running side are counted apart"
)
DIFF_METHOD = (
    "difference of pass rates over all paired cases (only pass counts); percentile bootstrap "
    "over items, each item resampled with all its repeats, seeded"
)
LATENCY_METHOD = "nearest rank over every generation with a latency, timed-out ones kept in"
COST_METHOD = "total cost of the arm's generations / its passed results (unknown when any cost is)"


@dataclass(frozen=True)
class Counts:
    """Outcome counts of a set of cases; ``pass_rate`` is over all of them."""

    passed: int
    failed: int
    pending: int
    incomplete: int
    running: int

    @property
    def total(self) -> int:
        """Every case, whatever its outcome."""
        return self.passed + self.failed + self.pending + self.incomplete + self.running

    @property
    def pass_rate(self) -> float | None:
        """Passes / all cases (pending, incomplete and running count as not passed)."""
        return self.passed / self.total if self.total else None

    def by_outcome(self) -> dict[str, int]:
        """Each outcome word of ``OUTCOMES`` with its count, in that order."""
        return dict(zip(OUTCOMES, astuple(self), strict=True))

    def range_text(self) -> str:
        """The pass rate's range from pending results (not a confidence interval)."""
        return pass_range(self.passed, self.failed, self.pending).text()


def count_outcomes(outcomes: Sequence[str]) -> Counts:
    """Count each outcome; an unknown word raises ValueError (it would vanish silently)."""
    unknown = sorted(set(outcomes) - set(OUTCOMES))
    if unknown:
        raise ValueError(f"unknown outcomes {unknown}; expected {OUTCOMES}")
    return Counts(*(sum(1 for o in outcomes if o == k) for k in OUTCOMES))


@dataclass(frozen=True)
class PairTable:
    """Two arms' cases paired: concordant, discordant, and pairs not decided on both sides."""

    both_pass: int
    only_a: int
    only_b: int
    both_fail: int
    undecided: int

    @property
    def mcnemar_p(self) -> float:
        """Exact McNemar p on the discordant pairs (1.0 with none)."""
        return mcnemar_exact(self.only_a, self.only_b)


Key = tuple[str, int]
"""A case's pairing key: (item, repeat)."""


def pair_table(a: Mapping[Key, str], b: Mapping[Key, str]) -> PairTable:
    """Pair the outcomes of two arms by (item, repeat); a key on one side only is undecided."""
    cells = {"both_pass": 0, "only_a": 0, "only_b": 0, "both_fail": 0, "undecided": 0}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, "running"), b.get(key, "running")
        if x not in DECIDED or y not in DECIDED:
            cells["undecided"] += 1
        elif x == y:
            cells["both_pass" if x == "pass" else "both_fail"] += 1
        else:
            cells["only_a" if x == "pass" else "only_b"] += 1
    return PairTable(**cells)


@dataclass(frozen=True)
class Difference:
    """Pass rate of A minus pass rate of B, with its bootstrap interval (None: no data)."""

    point: float | None
    low: float | None
    high: float | None
    level: float
    resamples: int


def item_differences(a: Mapping[Key, str], b: Mapping[Key, str]) -> tuple[FloatArray, FloatArray]:
    """Per item: (passes of A - passes of B) and the number of paired cases, items sorted."""
    items = sorted({k[0] for k in set(a) | set(b)})
    diff = np.zeros(len(items))
    cases = np.zeros(len(items))
    index = {item: i for i, item in enumerate(items)}
    for key in set(a) | set(b):
        i = index[key[0]]
        diff[i] += (a.get(key) == "pass") - (b.get(key) == "pass")
        cases[i] += 1
    return diff, cases


def bootstrap_difference(
    diff: FloatArray,
    cases: FloatArray,
    rng: np.random.Generator,
    resamples: int = 2000,
    level: float = 0.95,
) -> Difference:
    """Σ diff / Σ cases and its percentile bootstrap interval, resampling items.

    Each draw picks ``n`` items with replacement (each with all its repeats) and takes
    Σ diff / Σ cases of the picked items.
    """
    n = int(diff.size)
    if n == 0 or float(cases.sum()) == 0.0:
        return Difference(None, None, None, level, resamples)
    picks = rng.integers(0, n, size=(resamples, n))
    draws: FloatArray = diff[picks].sum(axis=1) / cases[picks].sum(axis=1)
    interval = percentile_interval(draws, level)
    low, high = interval if interval is not None else (None, None)
    return Difference(float(diff.sum() / cases.sum()), low, high, level, resamples)


@dataclass(frozen=True)
class Latency:
    """Nearest-rank latency percentiles of an arm's generations (timeouts included)."""

    p50_ms: float | None
    p95_ms: float | None
    measured: int
    timeouts: int
    unknown: int


def latency_summary(latencies: Sequence[float | None], timed_out: Sequence[bool]) -> Latency:
    """p50 and p95 by nearest rank; a timed-out generation counts with its latency."""
    known = np.sort(np.array([v for v in latencies if v is not None], dtype=np.float64))
    return Latency(
        nearest_rank(known, 50),
        nearest_rank(known, 95),
        int(known.size),
        sum(1 for t in timed_out if t),
        sum(1 for v in latencies if v is None),
    )


@dataclass(frozen=True)
class Cost:
    """What an arm's generations cost, and per passed result (None when unknown or no pass)."""

    total_usd: float | None
    known: int
    unknown: int
    per_pass_usd: float | None


def cost_per_pass(costs: Sequence[float | None], passes: int) -> Cost:
    """Total cost / passes; unknown when any generation's cost is unknown, None with no pass."""
    known = [c for c in costs if c is not None]
    unknown = len(costs) - len(known)
    total = float(sum(known)) if not unknown else None
    per_pass = total / passes if total is not None and passes > 0 else None
    return Cost(total, len(known), unknown, per_pass)


CONSISTENCY = ("always_right", "always_wrong", "unstable", "unresolved")


def consistency_class(outcomes: Sequence[str]) -> str:
    """An item's repeats: all pass, all fail, both pass and fail, or neither settled."""
    if outcomes and all(o == "pass" for o in outcomes):
        return "always_right"
    if outcomes and all(o == "fail" for o in outcomes):
        return "always_wrong"
    if "pass" in outcomes and "fail" in outcomes:
        return "unstable"
    return "unresolved"


def consistency(by_item: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The items of each consistency class (sorted), every class present."""
    out: dict[str, list[str]] = {name: [] for name in CONSISTENCY}
    for item in sorted(by_item):
        out[consistency_class(by_item[item])].append(item)
    return out
