"""Assemble a full report (a JSON-able dict) from report rows and optional judge records."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

import regua
from service.reports import figures as fig
from service.reports.aggregate import family_aggregates
from service.reports.config import ReportConfig as ReportConfig
from service.reports.ranking import bradley_terry, paired_table
from service.reports.rows import (
    IntArray,
    JudgeVote,
    ReportRow,
    RowTable,
    build_table,
    task_version,
)
from service.reports.slices import weighted_view
from service.reports.stats import BOOTSTRAP_METHOD, RANGE_LABEL, rng_for
from service.review.outcome import AuditRecord, overturns_by_judge

SCHEMA = "regua.report/1"


@dataclass(frozen=True)
class _Figures:
    """The per-group figures of a report, computed once and read by every task version."""

    table: RowTable
    cfg: ReportConfig
    counts: IntArray
    crit_counts: IntArray
    items: fig.ItemStats
    costs: dict[str, list[dict[str, object]]]
    """``generation_cost`` | ``judging_cost`` | ``total_cost`` → per group."""
    latencies: list[dict[str, object]]


def build_report(
    rows: Sequence[ReportRow],
    config: ReportConfig | None = None,
    *,
    audits: Sequence[AuditRecord] = (),
    votes: Sequence[JudgeVote] = (),
    task_hashes: Mapping[str, str] | None = None,
    now: datetime | None = None,
    task_dimensions: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Compute every figure of the report; the result is plain JSON-able data."""
    cfg = config or ReportConfig()
    table = build_table(rows, cfg.group_by)
    g = fig.group_codes(table)
    n_groups = len(table.tasks) * len(table.models)
    counts = fig.outcome_counts(table, g)
    figures = _Figures(
        table,
        cfg,
        counts,
        fig.criterion_counts(table, g),
        fig.item_stats(table, g),
        fig.cost_figures(table, g, n_groups, counts),
        fig.latency_figures(table, g, n_groups),
    )
    task_order = sorted(range(len(table.tasks)), key=lambda i: _task_sort_key(table, i))
    return {
        "schema": SCHEMA,
        "title": cfg.title,
        "group_by": cfg.group_by,
        "provenance": _provenance(rows, cfg, task_hashes, now),
        "methods": _methods(cfg),
        "task_versions": [_task_version_entry(figures, ti) for ti in task_order],
        "aggregates": family_aggregates(table, figures.items, counts, cfg),
        "judges": judge_view(audits, votes),
        "weighted": weighted_view(rows, task_dimensions or {}, cfg.by),
    }


def _methods(cfg: ReportConfig) -> dict[str, str]:
    """How each kind of figure is computed, in words (the report's ``methods`` section)."""
    return {
        "pass_range": f"pass rate over pass + fail + pending runs: {RANGE_LABEL}",
        "bootstrap": f"{BOOTSTRAP_METHOD}; {cfg.resamples} resamples, level {cfg.level}",
        "latency": fig.LATENCY_METHOD,
        "cost": fig.COST_METHOD,
        "judging_cost": fig.JUDGING_COST_METHOD,
        "total_cost": fig.TOTAL_COST_METHOD,
        "versions": "each task version is reported on its own; versions are never merged",
        "incomplete": "incomplete runs are machinery failures: counted, never a fail",
    }


def _task_version_entry(figures: _Figures, ti: int) -> dict[str, Any]:
    """One task version: its groups, the paired comparisons and the Bradley-Terry strengths."""
    table, cfg = figures.table, figures.cfg
    n_models = len(table.models)
    ref = table.tasks[ti]
    model_codes, decided, present, has_repeats = fig.slot_matrix(table, ti)
    names = [table.models[m] for m in model_codes]
    used = fig.task_criteria(figures.crit_counts, ti, n_models)
    groups = [
        _group_entry(figures, ti * n_models + m, ref, table.models[m], used)
        for m in sorted(model_codes, key=lambda c: table.models[c])
    ]
    task_id, version = task_version(ref)
    return {
        "task_ref": ref,
        "task_id": task_id,
        "version": version,
        "family": table.family_of[ref],
        "pool": table.pool_of[ref],
        "criteria": [table.criteria[j] for j in used],
        "groups": groups,
        "paired": paired_table(names, decided, present, has_repeats),
        "bradley_terry": bradley_terry(
            names, decided, cfg.resamples, rng_for(cfg.seed, "bt", ref), cfg.bt_prior
        ),
    }


def _group_entry(
    figures: _Figures, gi: int, ref: str, model: str, used: list[int]
) -> dict[str, Any]:
    """One group (model) of a task version: counts, interval, criteria, cost, latency, repeats."""
    cfg = figures.cfg
    return (
        {"model": model}
        | fig.summary(figures.counts[gi])
        | {
            "ci": fig.decided_ci(
                figures.items, gi, (ref, model), cfg.seed, cfg.resamples, cfg.level
            ),
            "criteria": fig.criterion_rows(figures.crit_counts[gi], figures.table.criteria, used),
            **{kind: per_group[gi] for kind, per_group in figures.costs.items()},
            "latency": figures.latencies[gi],
            "repeats": fig.repeat_figures(figures.items, gi, figures.table.item_keys),
        }
    )


def _task_sort_key(table: RowTable, i: int) -> tuple[str, str, str, int]:
    ref = table.tasks[i]
    task_id, version = task_version(ref)
    return (table.pool_of[ref], table.family_of[ref], task_id, version)


def _provenance(
    rows: Sequence[ReportRow],
    cfg: ReportConfig,
    task_hashes: Mapping[str, str] | None,
    now: datetime | None,
) -> dict[str, Any]:
    eval_set = {r.evaluation_id for r in rows}
    eval_set.discard(None)
    eval_ids = sorted(e for e in eval_set if e is not None)
    digest = hashlib.sha256("\n".join(eval_ids).encode()).hexdigest()
    weights = cfg.family_weights
    return {
        "regua_version": regua.__version__,
        "generated_at": (now or datetime.now(UTC)).isoformat(),
        "seed": cfg.seed,
        "resamples": cfg.resamples,
        "confidence_level": cfg.level,
        "group_by": cfg.group_by,
        "family_weights": weights if isinstance(weights, str) else dict(weights),
        "bt_prior_wins": cfg.bt_prior,
        "filters": dict(cfg.filters),
        "runs": len(rows),
        "task_versions": sorted({r.task_ref for r in rows}),
        "task_hashes": dict(task_hashes or {}),
        "judge_panels": sorted({r.judge_panel_id for r in rows if r.judge_panel_id}),
        "evaluation_count": len(eval_ids),
        "evaluation_ids_sha256": digest,
        "evaluation_ids": eval_ids if cfg.include_run_ids else None,
        "runs_without_evaluation": sum(r.evaluation_id is None for r in rows),
    }


def judge_view(audits: Sequence[AuditRecord], votes: Sequence[JudgeVote]) -> dict[str, Any]:
    """Audit overturns per judge profile and pairwise disagreement per criterion."""
    audit_rows = []
    for s in overturns_by_judge(audits):
        audit_rows.append(asdict(s) | {"overturn_rate": s.overturn_rate})
    by_unit: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for v in votes:
        by_unit[(v.task_ref, v.run_id, v.criterion)][v.judge_profile_id] = v.status
    tally: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (_, _, criterion), judged in by_unit.items():
        for a, b in combinations(sorted(judged), 2):
            cell = tally[(criterion, a, b)]
            cell[0] += 1
            cell[1] += judged[a] != judged[b]
    disagreement = [
        {
            "criterion": c,
            "judge_a": a,
            "judge_b": b,
            "compared": n,
            "disagreed": d,
            "rate": d / n,
        }
        for (c, a, b), (n, d) in sorted(tally.items())
    ]
    return {
        "audits": audit_rows,
        "audit_method": (
            "audited automatic passes per judge profile: overturned = people said fail; "
            "unconfirmed = people said uncertain or not applicable"
        ),
        "disagreement": disagreement,
        "disagreement_method": (
            "share of (run, criterion) units judged by both where the statuses differ"
        ),
    }
