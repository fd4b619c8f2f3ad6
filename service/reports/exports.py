"""CSV and JSON exports of a report (and the per-run list that lets a reader trace any number).

Cells that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@`` at the start of a
text cell — model labels are user input) are prefixed with a single quote.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from regua.errors import InputError
from service.reports.rows import ReportRow

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)
    return "" if value is None else value


def _write(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(v) for v in row])
    return path


def summary_rows(report: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """One line per (task version, group): counts, range, decided rate, CI, cost, latency."""
    header = [
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
        "cost_per_pass_usd",
        "cost_note",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_measured",
        "timeouts",
        "latency_method",
    ]
    out: list[list[Any]] = []
    for tv in report["task_versions"]:
        for g in tv["groups"]:
            ci = g["ci"]["interval"] or [None, None]
            c, rng, cost, lat = g["counts"], g["pass_range"], g["cost"], g["latency"]
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
                    cost["per_pass_usd"],
                    cost["note"],
                    lat["p50_ms"],
                    lat["p95_ms"],
                    lat["measured"],
                    lat["timeouts"],
                    lat["method"],
                ]
            )
    return header, out


def _bt_rows(scope: str, bt: dict[str, Any]) -> list[list[Any]]:
    out = []
    for m in bt["models"]:
        iv = m["interval"] or [None, None]
        ev = m["elo_interval"] or [None, None]
        tie = [m["technical_tie"], m["tied_with"]]
        out.append([scope, m["model"], m["rank"], m["log_strength"], *iv, m["elo"], *ev, *tie])
    return out


def write_csv(
    report: dict[str, Any], out_dir: Path, rows: Sequence[ReportRow] | None = None
) -> list[Path]:
    """Write every table of the report as CSV files in ``out_dir``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [_write(out_dir / "summary.csv", *summary_rows(report))]
    crit, paired, bt, rep = [], [], [], []
    for tv in report["task_versions"]:
        ref = tv["task_ref"]
        for g in tv["groups"]:
            for c in g["criteria"]:
                crit.append(
                    [
                        ref,
                        g["model"],
                        c["criterion"],
                        c["pass"],
                        c["fail"],
                        c["uncertain"],
                        c["not_applicable"],
                        c["missing"],
                        c["lower"],
                        c["upper"],
                    ]
                )
            if g["repeats"]:
                r = g["repeats"]
                rep.append(
                    [
                        ref,
                        g["model"],
                        r["items_with_repeats"],
                        r["pass_all_repeats_rate"],
                        r["mean_consistency"],
                        r["consistently_wrong"],
                        r["consistently_wrong_items"],
                    ]
                )
        for p in tv["paired"]:
            paired.append(
                [
                    ref,
                    p["model_a"],
                    p["model_b"],
                    p["both_pass"],
                    p["only_a"],
                    p["only_b"],
                    p["neither"],
                    p["excluded_undecided"],
                    p["mcnemar_p"],
                    p["caution"],
                ]
            )
        bt.extend(_bt_rows(ref, tv["bradley_terry"]))
    for agg in report["aggregates"]:
        bt.extend(_bt_rows(f"pool:{agg['pool']}", agg["bradley_terry"]))
    crit_head = [
        "task_ref",
        "group",
        "criterion",
        "pass",
        "fail",
        "uncertain",
        "not_applicable",
        "missing",
        "pass_share_lower",
        "pass_share_upper",
    ]
    written.append(_write(out_dir / "criteria.csv", crit_head, crit))
    paired_head = [
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
    written.append(_write(out_dir / "paired.csv", paired_head, paired))
    bt_head = [
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
    ]
    written.append(_write(out_dir / "bradley_terry.csv", bt_head, bt))
    rep_head = [
        "task_ref",
        "group",
        "items_with_repeats",
        "pass_all_repeats_rate",
        "mean_consistency",
        "consistently_wrong",
        "consistently_wrong_items",
    ]
    written.append(_write(out_dir / "repeats.csv", rep_head, rep))
    fam = [
        [
            agg["pool"],
            m["model"],
            f["family"],
            f["weight"],
            f["counts"]["pass"],
            f["counts"]["fail"],
            f["counts"]["pending"],
            f["lower"],
            f["upper"],
            f["decided_rate"],
            m["overall"]["lower"],
            m["overall"]["upper"],
            m["overall"]["decided_rate"],
        ]
        for agg in report["aggregates"]
        for m in agg["models"]
        for f in m["families"]
    ]
    fam_head = [
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
    written.append(_write(out_dir / "families.csv", fam_head, fam))
    judges = report["judges"]
    written.append(
        _write(
            out_dir / "judge_audits.csv",
            ["judge_profile_id", "audited", "confirmed", "overturned", "unconfirmed", "rate"],
            (
                [
                    a["judge_profile_id"],
                    a["audited"],
                    a["confirmed"],
                    a["overturned"],
                    a["unconfirmed"],
                    a["overturn_rate"],
                ]
                for a in judges["audits"]
            ),
        )
    )
    written.append(
        _write(
            out_dir / "judge_disagreement.csv",
            ["criterion", "judge_a", "judge_b", "compared", "disagreed", "rate"],
            (
                [
                    d["criterion"],
                    d["judge_a"],
                    d["judge_b"],
                    d["compared"],
                    d["disagreed"],
                    d["rate"],
                ]
                for d in judges["disagreement"]
            ),
        )
    )
    if rows is not None:
        written.append(
            _write(
                out_dir / "runs.csv",
                [
                    "run_id",
                    "evaluation_id",
                    "task_ref",
                    "model",
                    "item_key",
                    "repeat",
                    "outcome",
                    "judge_panel_id",
                    "cost_usd",
                    "latency_ms",
                    "timed_out",
                ],
                (
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
                        r.latency_ms,
                        r.timed_out,
                    ]
                    for r in rows
                ),
            )
        )
    return written


def write_json(report: dict[str, Any], path: Path) -> Path:
    """Write the report as indented JSON (NaN never appears: missing values are ``null``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, allow_nan=False), encoding="utf-8")
    return path


FORMATS = ("html", "csv", "json")


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """One CSV table as text (same quoting and formula guard as the files)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


def write_outputs(
    report: dict[str, Any],
    out_dir: Path,
    formats: Sequence[str] = FORMATS,
    rows: Sequence[ReportRow] | None = None,
) -> list[Path]:
    """Write the chosen formats into ``out_dir``: ``report.html`` (+ ``report.css``),
    ``report.json`` and the CSV tables. Returns every path written."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise InputError(f"unknown report format(s) {unknown}; choose from {', '.join(FORMATS)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if "json" in formats:
        written.append(write_json(report, out_dir / "report.json"))
    if "csv" in formats:
        written.extend(write_csv(report, out_dir, rows))
    if "html" in formats:
        from service.reports.html import CSS_NAME, render_html, stylesheet

        (out_dir / CSS_NAME).write_text(stylesheet(), encoding="utf-8")
        (out_dir / "report.html").write_text(render_html(report, CSS_NAME), encoding="utf-8")
        written.extend([out_dir / "report.html", out_dir / CSS_NAME])
    return written
