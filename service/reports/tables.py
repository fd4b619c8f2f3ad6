"""The tables of a report as CSV-ready rows (one function per file the exports write).

Each function returns ``(header, rows)`` of plain values; :mod:`service.reports.exports` guards
and writes the cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from judges.pairwise.bradley_terry import CONVENTION
from service.reports.figures import COST_KINDS
from service.reports.rows import ReportRow
from service.reports.slices import weighted_rows

Table = tuple[list[str], list[list[Any]]]
"""A CSV table: its header and its rows."""
_SUMMARY_HEADER = (
    "task_ref",
    "family",
    "pool",
    "group",
    "pass",
    "fail",
    "pending",
    "incomplete",
    "pass_rate_lower",
    "pass_rate_upper",
    "range_label",
    "decided_rate",
    "ci_low",
    "ci_high",
    "ci_level",
    "items",
    "generation_cost_per_pass_usd",
    "generation_cost_note",
    "judging_cost_per_pass_usd",
    "judging_cost_note",
    "total_cost_per_pass_usd",
    "total_cost_note",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_measured",
    "timeouts",
    "latency_method",
)


def summary_rows(report: dict[str, Any]) -> Table:
    """One line per (task version, group): counts, range, decided rate, CI, cost, latency."""
    header = list(_SUMMARY_HEADER)
    out: list[list[Any]] = []
    for tv in report["task_versions"]:
        for g in tv["groups"]:
            ci = g["ci"]["interval"] or [None, None]
            c, rng, lat = g["counts"], g["pass_range"], g["latency"]
            costs = [g[k][f] for k in COST_KINDS for f in ("per_pass_usd", "note")]
            out.append(
                [
                    tv["task_ref"],
                    tv["family"],
                    tv["pool"],
                    g["model"],
                    c["pass"],
                    c["fail"],
                    c["pending"],
                    c["incomplete"],
                    rng["lower"],
                    rng["upper"],
                    rng["label"],
                    g["decided_rate"],
                    ci[0],
                    ci[1],
                    g["ci"]["level"],
                    g["ci"]["items"],
                    *costs,
                    lat["p50_ms"],
                    lat["p95_ms"],
                    lat["measured"],
                    lat["timeouts"],
                    lat["method"],
                ]
            )
    return header, out


def _bt_rows(scope: str, bt: dict[str, Any]) -> list[list[Any]]:
    """The lines of one Bradley-Terry result, each starting with ``scope``."""
    out = []
    for m in bt["models"]:
        iv = m["interval"] or [None, None]
        ev = m["elo_interval"] or [None, None]
        tie = [m["technical_tie"], m["tied_with"]]
        row = [scope, m["model"], m["rank"], m["log_strength"], *iv, m["elo"], *ev, *tie]
        out.append([*row, CONVENTION])
    return out


_RANGE_KEYS = ("lower", "upper", "decided_rate")
"""A pass-rate range and its decided share, as a family and the overall figures carry them."""
_STATUSES = ("pass", "fail", "uncertain", "not_applicable", "missing")
"""The criterion statuses a table counts, in column order."""

_CRITERIA_HEADER = [
    "task_ref",
    "group",
    "criterion",
    *_STATUSES,
    "pass_share_lower",
    "pass_share_upper",
]
_PAIRED_HEADER = [
    "task_ref",
    "a",
    "b",
    "both_pass",
    "only_a",
    "only_b",
    "neither",
    "excluded_undecided",
    "mcnemar_exact_p",
    "caution",
]
_BT_HEADER = [
    "task_ref",
    "group",
    "rank",
    "log_strength",
    "ci_low",
    "ci_high",
    "elo",
    "elo_low",
    "elo_high",
    "technical_tie",
    "tied_with",
    "convention",
]
_REPEATS_HEADER = [
    "task_ref",
    "group",
    "items_with_repeats",
    "pass_all_repeats_rate",
    "mean_consistency",
    "consistently_wrong",
    "consistently_wrong_items",
]
_FAMILIES_HEADER = [
    "pool",
    "group",
    "family",
    "weight",
    "pass",
    "fail",
    "pending",
    "lower",
    "upper",
    "decided_rate",
    "overall_lower",
    "overall_upper",
    "overall_decided_rate",
]
_AUDITS_HEADER = ["judge_profile_id", "audited", "confirmed", "overturned", "unconfirmed", "rate"]
_AUDIT_KEYS = ("judge_profile_id", "audited", "confirmed", "overturned", "unconfirmed")
_DISAGREEMENT_HEADER = ["criterion", "judge_a", "judge_b", "compared", "disagreed", "rate"]
_RUNS_HEADER = [
    "run_id",
    "evaluation_id",
    "task_ref",
    "model",
    "item_key",
    "repeat",
    "outcome",
    "judge_panel_id",
    "generation_cost_usd",
    "judging_cost_usd",
    "total_cost_usd",
    "latency_ms",
    "timed_out",
]
_CRITERION_KEYS = (
    "criterion",
    *_STATUSES,
    "lower",
    "upper",
)
_REPEAT_KEYS = (
    "items_with_repeats",
    "pass_all_repeats_rate",
    "mean_consistency",
    "consistently_wrong",
    "consistently_wrong_items",
)
_PAIRED_KEYS = (
    "model_a",
    "model_b",
    "both_pass",
    "only_a",
    "only_b",
    "neither",
    "excluded_undecided",
    "mcnemar_p",
    "caution",
)


def criteria_rows(report: dict[str, Any]) -> Table:
    """One line per (task version, group, criterion): status counts and the pass-share range."""
    rows = [
        [tv["task_ref"], g["model"], *(c[k] for k in _CRITERION_KEYS)]
        for tv in report["task_versions"]
        for g in tv["groups"]
        for c in g["criteria"]
    ]
    return _CRITERIA_HEADER, rows


def paired_rows(report: dict[str, Any]) -> Table:
    """One line per compared pair of groups in a task version: the 2x2 table and McNemar p."""
    rows = [
        [tv["task_ref"], *(p[k] for k in _PAIRED_KEYS)]
        for tv in report["task_versions"]
        for p in tv["paired"]
    ]
    return _PAIRED_HEADER, rows


def bradley_terry_rows(report: dict[str, Any]) -> Table:
    """Strengths per task version, then per pool (scope ``pool:<name>``)."""
    rows: list[list[Any]] = []
    for tv in report["task_versions"]:
        rows.extend(_bt_rows(tv["task_ref"], tv["bradley_terry"]))
    for agg in report["aggregates"]:
        rows.extend(_bt_rows(f"pool:{agg['pool']}", agg["bradley_terry"]))
    return _BT_HEADER, rows


def repeats_rows(report: dict[str, Any]) -> Table:
    """One line per (task version, group) with repeats: consistency across repeats."""
    rows = [
        [tv["task_ref"], g["model"], *(g["repeats"][k] for k in _REPEAT_KEYS)]
        for tv in report["task_versions"]
        for g in tv["groups"]
        if g["repeats"]
    ]
    return _REPEATS_HEADER, rows


def families_rows(report: dict[str, Any]) -> Table:
    """One line per (pool, group, family): the family figures next to the overall figures."""
    rows = [
        [
            agg["pool"],
            m["model"],
            f["family"],
            f["weight"],
            *(f["counts"][status] for status in ("pass", "fail", "pending")),
            *(f[key] for key in _RANGE_KEYS),
            *(m["overall"][key] for key in _RANGE_KEYS),
        ]
        for agg in report["aggregates"]
        for m in agg["models"]
        for f in m["families"]
    ]
    return _FAMILIES_HEADER, rows


def judge_audit_rows(report: dict[str, Any]) -> Table:
    """One line per judge profile: audited passes, confirmed, overturned and the overturn rate."""
    rows = [[*(a[k] for k in _AUDIT_KEYS), a["overturn_rate"]] for a in report["judges"]["audits"]]
    return _AUDITS_HEADER, rows


def judge_disagreement_rows(report: dict[str, Any]) -> Table:
    """One line per (criterion, pair of judges): units compared, disagreed, and the rate."""
    rows = [[d[k] for k in _DISAGREEMENT_HEADER] for d in report["judges"]["disagreement"]]
    return _DISAGREEMENT_HEADER, rows


def run_rows(rows: Sequence[ReportRow]) -> Table:
    """One line per run the report counted (lets a reader trace any number back to runs)."""
    lines = [
        [
            r.run_id,
            r.evaluation_id,
            r.task_ref,
            r.model,
            r.item_key,
            r.repeat,
            r.outcome,
            r.judge_panel_id,
            r.cost_usd,
            r.judging_cost_usd,
            None
            if r.cost_usd is None or r.judging_cost_usd is None
            else r.cost_usd + r.judging_cost_usd,
            r.latency_ms,
            r.timed_out,
        ]
        for r in rows
    ]
    return _RUNS_HEADER, lines


REPORT_TABLES: tuple[tuple[str, Callable[[dict[str, Any]], Table]], ...] = (
    ("summary.csv", summary_rows),
    ("criteria.csv", criteria_rows),
    ("paired.csv", paired_rows),
    ("bradley_terry.csv", bradley_terry_rows),
    ("repeats.csv", repeats_rows),
    ("families.csv", families_rows),
    ("judge_audits.csv", judge_audit_rows),
    ("judge_disagreement.csv", judge_disagreement_rows),
    ("weighted.csv", weighted_rows),
)
"""The CSV files of a report, in the order they are written, and the table each one holds."""
