"""Per-pool aggregates over template families, each family weighted equally by default.

Every task version of the pool enters its aggregate, each as its own unit (versions are never
spliced into one task); a model's figures use exactly the versions that model ran, and list them
with the runs each contributes, so one model's figures never depend on another model's runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from service.reports.config import ReportConfig
from service.reports.figures import ItemStats, slot_matrix
from service.reports.ranking import bradley_terry
from service.reports.rows import (
    FAIL,
    INCOMPLETE,
    PASS,
    PENDING,
    FloatArray,
    IntArray,
    RowTable,
    task_version,
)
from service.reports.stats import bootstrap_ratio_draws, pass_range, percentile_interval, rng_for

AGGREGATE_METHOD = (
    "Per family: the model's runs of every task version of the family pooled (each version "
    "listed with its runs; no run is dropped, no version stands for another); overall: weighted "
    "mean of the family figures (weights renormalised over families with data); the interval "
    "resamples items within each family. A model's figures use only its own runs"
)


def pool_versions(table: RowTable, pool: str) -> list[int]:
    """Task codes of every task version in ``pool`` (sorted by task id, then version)."""
    codes = [c for c, ref in enumerate(table.tasks) if table.pool_of[ref] == pool]
    return sorted(codes, key=lambda c: task_version(table.tasks[c]))


def _weight(weights: str | Mapping[str, float], family: str, runs: int) -> float:
    if weights == "equal":
        return 1.0
    if weights == "runs":
        return float(runs)
    if isinstance(weights, str):
        raise ValueError(f"family_weights must be equal, runs or a mapping, got {weights!r}")
    return float(weights.get(family, 0.0))


def pool_ranking(
    table: RowTable, codes: list[int], weights: str | Mapping[str, float], cfg: ReportConfig
) -> dict[str, object]:
    """Bradley-Terry over every item of every task version of the pool.

    Slots (item, repeat) of different tasks are never paired with each other; each family's slots
    share the family's weight (so a family with many variants does not dominate), rescaled so the
    weights sum to the number of slots.
    """
    blocks: list[FloatArray] = []
    families: list[str] = []
    for code in codes:
        models, decided, _, _ = slot_matrix(table, code)
        block = np.full((len(table.models), decided.shape[1]), np.nan)
        block[models] = decided
        blocks.append(block)
        families += [table.family_of[table.tasks[code]]] * decided.shape[1]
    full = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(table.models), 0))
    fam = np.array(families, dtype=object)
    slot_w = np.zeros(fam.size)
    for name in set(families):
        mask = fam == name
        slot_w[mask] = _weight(weights, name, int(mask.sum())) / mask.sum()
    if slot_w.sum() > 0:
        slot_w *= fam.size / slot_w.sum()
    result = bradley_terry(
        list(table.models),
        full,
        cfg.resamples,
        rng_for(cfg.seed, "bt-pool", *(table.tasks[c] for c in codes)),
        cfg.bt_prior,
        cfg.level,
        weights=slot_w,
    )
    result["scope"] = (
        "All items of the task versions above; a pass beats a fail only on the same item of the "
        "same task; slots weighted so that each family counts as configured"
    )
    return result


def _weighted(values: FloatArray, weights: FloatArray) -> float | None:
    ok = np.isfinite(values) & (weights > 0)
    if not ok.any():
        return None
    return float((values[ok] * weights[ok]).sum() / weights[ok].sum())


@dataclass(frozen=True)
class _Pool:
    """One pool's task versions and what their figures are computed from."""

    name: str
    codes: list[int]
    families: list[str]
    table: RowTable
    items: ItemStats
    counts: IntArray
    cfg: ReportConfig


def family_aggregates(
    table: RowTable, items: ItemStats, counts: IntArray, cfg: ReportConfig
) -> list[dict[str, Any]]:
    """One entry per pool: per model, per-family results and the weighted overall figures."""
    out: list[dict[str, Any]] = []
    for pool in sorted(set(table.pool_of.values())):
        codes = pool_versions(table, pool)
        families = sorted({table.family_of[table.tasks[c]] for c in codes})
        scope = _Pool(pool, codes, families, table, items, counts, cfg)
        out.append(_pool_aggregate(scope))
    return out


def _pool_aggregate(pool: _Pool) -> dict[str, Any]:
    """The aggregate entry of one pool: its versions, families, models and pool ranking."""
    table, cfg = pool.table, pool.cfg
    model_rows: list[dict[str, Any]] = []
    for m in sorted(range(len(table.models)), key=lambda c: table.models[c]):
        row = _model_aggregate(pool, m)
        if row is not None:
            model_rows.append(row)
    return {
        "pool": pool.name,
        "weighting": cfg.family_weights
        if isinstance(cfg.family_weights, str)
        else dict(cfg.family_weights),
        "task_versions": [table.tasks[c] for c in pool.codes],
        "families": pool.families,
        "models": model_rows,
        "bradley_terry": pool_ranking(table, pool.codes, cfg.family_weights, cfg),
        "method": AGGREGATE_METHOD,
    }


def _model_aggregate(pool: _Pool, m: int) -> dict[str, Any] | None:
    """Model ``m``'s per-family rows and overall figures in the pool (None without any run)."""
    fam_rows: list[dict[str, Any]] = []
    draws: list[FloatArray] = []
    for fam in pool.families:
        found = _family_figures(pool, fam, m)
        if found is not None:
            fam_rows.append(found[0])
            draws.append(found[1])
    if not fam_rows:
        return None
    present = {r["family"] for r in fam_rows}
    return {
        "model": pool.table.models[m],
        "versions": [v for r in fam_rows for v in r["versions"]],
        "families": fam_rows,
        "missing_families": [f for f in pool.families if f not in present],
        "overall": _overall(fam_rows, draws, pool.cfg.level),
    }


def _family_figures(pool: _Pool, fam: str, m: int) -> tuple[dict[str, Any], FloatArray] | None:
    """Model ``m``'s runs of one family pooled, and the bootstrap draws of its decided rate."""
    table, cfg = pool.table, pool.cfg
    n_models = len(table.models)
    codes = [c for c in pool.codes if table.family_of[table.tasks[c]] == fam]
    groups = [c * n_models + m for c in codes]
    c4 = pool.counts[groups].sum(0)
    if int(c4.sum()) == 0:
        return None
    versions = [
        {
            "task_ref": table.tasks[c],
            "runs": int(pool.counts[g, :INCOMPLETE].sum()),
            "incomplete": int(pool.counts[g, INCOMPLETE]),
        }
        for c, g in zip(codes, groups, strict=True)
        if int(pool.counts[g].sum())
    ]
    p, f, pend = int(c4[PASS]), int(c4[FAIL]), int(c4[PENDING])
    rng = pass_range(p, f, pend)
    item_p = np.concatenate([pool.items.slice(gi)[0] for gi in groups])
    item_d = np.concatenate([pool.items.slice(gi)[1] for gi in groups])
    draw = bootstrap_ratio_draws(
        item_p,
        item_d,
        cfg.resamples,
        rng_for(cfg.seed, "agg", pool.name, fam, table.models[m]),
    )
    row = {
        "family": fam,
        "versions": versions,
        "weight": _weight(cfg.family_weights, fam, int(c4.sum())),
        "counts": {"pass": p, "fail": f, "pending": pend, "runs": int(c4.sum())},
        "lower": rng.lower,
        "upper": rng.upper,
        "decided_rate": p / (p + f) if p + f else None,
        "items": int(item_p.size),
    }
    return row, draw


def _overall(
    fam_rows: Sequence[dict[str, Any]], draws: Sequence[FloatArray], level: float
) -> dict[str, Any]:
    """Weighted means of the family figures, and the interval of the weighted bootstrap mean."""
    w = np.array([r["weight"] for r in fam_rows], dtype=np.float64)
    lower = np.array([r["lower"] for r in fam_rows], dtype=np.float64)
    upper = np.array([r["upper"] for r in fam_rows], dtype=np.float64)
    dec = np.array([np.nan if r["decided_rate"] is None else r["decided_rate"] for r in fam_rows])
    boot = np.stack(draws)
    ok = np.isfinite(boot) & (w[:, None] > 0)
    wsum = (w[:, None] * ok).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_mean = np.where(ok, boot, 0.0).T @ w / np.where(wsum > 0, wsum, np.nan)
    interval = percentile_interval(boot_mean, level)
    return {
        "lower": _weighted(lower, w),
        "upper": _weighted(upper, w),
        "decided_rate": _weighted(dec, w),
        "ci": list(interval) if interval else None,
    }
