"""Per (task version, model) figures, computed for all groups at once from a :class:`RowTable`.

A *group* is one (task version, model) pair, numbered ``task * n_models + model``. Everything here
is vectorised with ``numpy.bincount`` / sorting so 100,000 runs take milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.reports.rows import (
    C_FAIL,
    C_MISSING,
    C_PASS,
    C_UNCERTAIN,
    CRITERION_STATUSES,
    FAIL,
    OUTCOMES,
    PASS,
    FloatArray,
    IntArray,
    RowTable,
)
from service.reports.stats import (
    PERCENTILE_METHOD,
    RANGE_LABEL,
    bootstrap_ratio_draws,
    decided_rate,
    nearest_rank,
    pass_range,
    percentile_interval,
    rng_for,
)

LATENCY_METHOD = (
    f"{PERCENTILE_METHOD}; over runs with a known latency that did not time out "
    "(timed-out runs are counted, never given a latency)"
)
COST_METHOD = (
    "cost per pass = all attempts' cost / passed runs, for generation, judging and their total "
    "(generation_cost, judging_cost, total_cost); not available when any attempt's cost is unknown"
)
JUDGING_COST_METHOD = (
    "judging cost = the sum of each run's judge calls in its current evaluation, each priced "
    "from the same price table as generation (usage times REGUA_PRICE_TABLE, or the provider's own "
    "cost); not available when any model call of a run has no price (an adjudication call is "
    "never priced); static, geometry and human judges cost nothing; failed judge calls carry "
    "no usage and are not counted"
)
TOTAL_COST_METHOD = "total cost = generation cost + judging cost; not available when either is"
COST_KINDS = ("generation_cost", "judging_cost", "total_cost")
"""The three costs of a group, each with the same fields, in the JSON, CSV and HTML."""


@dataclass(frozen=True)
class ItemStats:
    """Per (group, item): passes, decided runs and runs, sorted by group."""

    group: IntArray
    item: IntArray
    passes: IntArray
    decided: IntArray
    runs: IntArray
    bounds: IntArray
    """``bounds[g]:bounds[g+1]`` are the items of group ``g``."""

    def slice(self, g: int) -> tuple[IntArray, IntArray, IntArray]:
        """Passes, decided and runs of every item of group ``g``."""
        lo, hi = int(self.bounds[g]), int(self.bounds[g + 1])
        return self.passes[lo:hi], self.decided[lo:hi], self.runs[lo:hi]


def group_codes(t: RowTable) -> IntArray:
    """Group number of every run."""
    return t.task * len(t.models) + t.model


def outcome_counts(t: RowTable, g: IntArray) -> IntArray:
    """Shape (groups, 4): runs per outcome (pass, fail, pending, incomplete)."""
    n_groups = len(t.tasks) * len(t.models)
    return np.bincount(g * 4 + t.outcome, minlength=n_groups * 4).reshape(n_groups, 4)


def criterion_counts(t: RowTable, g: IntArray) -> IntArray:
    """Shape (groups, criteria, 5): runs per criterion status (incl. ``missing``)."""
    n_groups, n_crit = len(t.tasks) * len(t.models), len(t.criteria)
    if n_crit == 0:
        return np.zeros((n_groups, 0, 5), dtype=np.int64)
    idx = (g[:, None] * n_crit + np.arange(n_crit)[None, :]) * 5 + t.crit
    flat = np.bincount(idx.ravel(), minlength=n_groups * n_crit * 5)
    return flat.reshape(n_groups, n_crit, 5)


def item_stats(t: RowTable, g: IntArray) -> ItemStats:
    """Aggregate runs to (group, item)."""
    n_groups = len(t.tasks) * len(t.models)
    n_items = max(len(t.item_keys), 1)
    keys, inverse = np.unique(g * n_items + t.item, return_inverse=True)
    passes = np.bincount(inverse, weights=t.outcome == PASS, minlength=keys.size)
    decided = np.bincount(inverse, weights=t.outcome <= FAIL, minlength=keys.size)
    runs = np.bincount(inverse, minlength=keys.size)
    group = keys // n_items
    bounds = np.searchsorted(group, np.arange(n_groups + 1))
    return ItemStats(
        group=group,
        item=keys % n_items,
        passes=passes.astype(np.int64),
        decided=decided.astype(np.int64),
        runs=runs.astype(np.int64),
        bounds=bounds.astype(np.int64),
    )


def summary(counts: IntArray) -> dict[str, object]:
    """Counts, the pending range and the decided rate of one row of ``outcome_counts``."""
    p, f, pend, inc = (int(x) for x in counts)
    rng = pass_range(p, f, pend)
    return {
        "counts": {name: int(c) for name, c in zip(OUTCOMES, counts, strict=True)}
        | {"runs": int(counts.sum())},
        "pass_range": {
            "lower": rng.lower,
            "upper": rng.upper,
            "text": rng.text(),
            "label": RANGE_LABEL,
        },
        "decided_rate": decided_rate(p, f),
        "incomplete_note": (
            f"{inc} incomplete (machinery failure, not a fail of the work; excluded)"
            if inc
            else None
        ),
    }


def decided_ci(
    items: ItemStats, g: int, key: tuple[str, ...], seed: int, resamples: int, level: float
) -> dict[str, object]:
    """Bootstrap interval of the decided pass rate of group ``g`` over its items."""
    passes, decided, _ = items.slice(g)
    draws = bootstrap_ratio_draws(passes, decided, resamples, rng_for(seed, *key))
    interval = percentile_interval(draws, level)
    return {
        "level": level,
        "interval": list(interval) if interval else None,
        "resamples": resamples,
        "resamples_without_decided": int(np.isnan(draws).sum()),
        "items": int(passes.size),
    }


def task_criteria(crit_counts: IntArray, task: int, n_models: int) -> list[int]:
    """Indices of the criteria that carry a status in at least one run of a task version."""
    block = crit_counts[task * n_models : (task + 1) * n_models, :, :C_MISSING]
    return [int(j) for j in np.flatnonzero(block.sum(axis=(0, 2)))]


def criterion_rows(
    counts: IntArray, criteria: list[str], used: list[int]
) -> list[dict[str, object]]:
    """Per used criterion: status counts and the pass share range (uncertain as fail / as pass).

    ``missing`` counts the runs without a status (e.g. incomplete evaluations).
    """
    out: list[dict[str, object]] = []
    for j in used:
        cid, c = criteria[j], counts[j]
        rng = pass_range(int(c[C_PASS]), int(c[C_FAIL]), int(c[C_UNCERTAIN]))
        out.append(
            {"criterion": cid}
            | {name: int(c[i]) for i, name in enumerate(CRITERION_STATUSES)}
            | {"lower": rng.lower, "upper": rng.upper, "text": rng.text()}
        )
    return out


def cost_figures(
    t: RowTable, g: IntArray, n_groups: int, counts: IntArray
) -> dict[str, list[dict[str, object]]]:
    """Generation, judging and total cost per passed result for every group (never estimated)."""
    arrays = {
        "generation_cost": t.cost,
        "judging_cost": t.judging_cost,
        "total_cost": t.cost + t.judging_cost,  # NaN (unknown) when either is
    }
    return {kind: _cost_kind(cost, g, n_groups, counts) for kind, cost in arrays.items()}


def _cost_kind(
    cost: FloatArray, g: IntArray, n_groups: int, counts: IntArray
) -> list[dict[str, object]]:
    """One cost per passed result for every group."""
    unknown = np.bincount(g, weights=np.isnan(cost), minlength=n_groups)
    total = np.bincount(g, weights=np.nan_to_num(cost, nan=0.0), minlength=n_groups)
    out: list[dict[str, object]] = []
    for gi in range(n_groups):
        passes, runs, unk = int(counts[gi, PASS]), int(counts[gi].sum()), int(unknown[gi])
        if unk:
            value, note = None, f"not available: cost unknown for {unk} of {runs} attempts"
        elif passes == 0:
            value, note = None, "not available: no passed result"
        else:
            value, note = float(total[gi]) / passes, None
        out.append(
            {
                "per_pass_usd": value,
                "total_usd": None if unk else float(total[gi]),
                "attempts": runs,
                "unknown": unk,
                "note": note,
                "method": COST_METHOD,
            }
        )
    return out


def latency_figures(t: RowTable, g: IntArray, n_groups: int) -> list[dict[str, object]]:
    """Latency p50/p95 (nearest rank) per group, with timeouts and unknowns counted apart."""
    usable = ~np.isnan(t.latency) & ~t.timed_out
    timeouts = np.bincount(g, weights=t.timed_out, minlength=n_groups)
    unknown = np.bincount(g, weights=np.isnan(t.latency) & ~t.timed_out, minlength=n_groups)
    gv, lv = g[usable], t.latency[usable]
    order = np.lexsort((lv, gv))
    gv, lv = gv[order], lv[order]
    bounds = np.searchsorted(gv, np.arange(n_groups + 1))
    out: list[dict[str, object]] = []
    for gi in range(n_groups):
        values: FloatArray = lv[bounds[gi] : bounds[gi + 1]]
        out.append(
            {
                "p50_ms": nearest_rank(values, 50),
                "p95_ms": nearest_rank(values, 95),
                "measured": int(values.size),
                "timeouts": int(timeouts[gi]),
                "unknown": int(unknown[gi]),
                "method": LATENCY_METHOD,
            }
        )
    return out


def repeat_figures(
    items: ItemStats, g: int, item_keys: list[str], list_limit: int = 50
) -> dict[str, object] | None:
    """Repeat consistency of group ``g`` (None when no item has two decided runs)."""
    passes, decided, runs = items.slice(g)
    lo = int(items.bounds[g])
    multi = decided >= 2
    if not multi.any():
        return None
    p, d = passes[multi], decided[multi]
    fails = d - p
    consistency = np.maximum(p, fails) / d
    wrong = np.flatnonzero(multi & (passes == 0))
    wrong_keys = [item_keys[int(items.item[lo + i])] for i in wrong[:list_limit]]
    return {
        "items_with_repeats": int(multi.sum()),
        "max_repeats": int(runs.max()),
        "pass_all_repeats_rate": float((p == d).mean()),
        "mean_consistency": float(consistency.mean()),
        "fully_consistent_rate": float((consistency == 1.0).mean()),
        "consistently_wrong": int(wrong.size),
        "consistently_wrong_items": wrong_keys,
        "method": (
            "over items with at least two decided repeats (pending and incomplete repeats left "
            "out); consistency = share of an item's repeats that agree with its majority verdict"
        ),
    }


def slot_matrix(t: RowTable, task: int) -> tuple[list[int], FloatArray, np.ndarray, bool]:
    """Models present in a task version and their (models, slots) decided matrix.

    Returns model codes, the matrix (1 pass, 0 fail, NaN undecided or absent), a ``present`` mask
    and whether any item has more than one repeat.
    """
    sel = np.flatnonzero(t.task == task)
    model_codes, local = np.unique(t.model[sel], return_inverse=True)
    slot_key = t.item[sel] * (int(t.repeat[sel].max(initial=0)) + 1) + t.repeat[sel]
    _, slot = np.unique(slot_key, return_inverse=True)
    k = int(slot.max(initial=-1)) + 1
    decided = np.full((model_codes.size, k), np.nan)
    present = np.zeros((model_codes.size, k), dtype=np.bool_)
    out = t.outcome[sel]
    val = np.where(out == PASS, 1.0, np.where(out == FAIL, 0.0, np.nan))
    decided[local, slot] = val
    present[local, slot] = True
    has_repeats = bool((t.repeat[sel] > 0).any())
    return [int(c) for c in model_codes], decided, present, has_repeats
