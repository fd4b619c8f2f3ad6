"""An experiment's report as files (``regua report --experiment ID --out DIR``) and as a page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from service.access.tokens import Principal
from service.context import ServiceContext
from service.experiments.access import readable_experiment
from service.experiments.html import render_experiment_html
from service.experiments.jobs import experiment_progress
from service.experiments.report_db import experiment_history, experiment_report
from service.experiments.revision_report import summary_lines as feedback_lines
from service.experiments.store import windows_of
from service.reports.html import CSS_NAME, stylesheet
from service.storage import Database


def resolve_experiment_id(db: Database, ident: str) -> str:
    """``NAME@WINDOW`` as given, or the newest window of ``NAME``."""
    if "@" in ident:
        return ident
    rows = windows_of(db, ident)
    return rows[-1].id if rows else f"{ident}@default"


def write_experiment_report(
    db: Database, ident: str, out_dir: Path
) -> tuple[dict[str, Any], list[Path]]:
    """Write ``experiment.json``, ``history.json``, ``experiment.html`` (+ CSS); the report."""
    report = experiment_report(db, resolve_experiment_id(db, ident))
    history = experiment_history(db, report["experiment"]["name"])
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "experiment.json", out_dir / "history.json", out_dir / "experiment.html"]
    paths[0].write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    paths[1].write_text(json.dumps(history, indent=2, sort_keys=True), encoding="utf-8")
    paths[2].write_text(render_experiment_html(report, history, CSS_NAME), encoding="utf-8")
    (out_dir / CSS_NAME).write_text(stylesheet(), encoding="utf-8")
    return report, [*paths, out_dir / CSS_NAME]


def experiment_page_html(ctx: ServiceContext, experiment_id: str, caller: Principal) -> str:
    """The report page (SVG charts, no script) with the experiment's windows over time.

    For a caller who may read the experiment (:mod:`service.experiments.access`; else 404).
    An experiment whose runs are all judged is marked done first.
    """
    readable_experiment(ctx.db, experiment_id, caller)
    experiment_progress(ctx, experiment_id)
    report = experiment_report(ctx.db, experiment_id)
    history = experiment_history(ctx.db, report["experiment"]["name"])
    return render_experiment_html(report, history)


COST_KINDS = ("generation_cost", "judging_cost", "total_cost")
"""An arm's three costs, each with the same fields (JSON), columns and lines."""


def _usd(value: float | None) -> str:
    return "not available" if value is None else f"${value:.4f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The report in a few lines for a terminal."""
    exp = report["experiment"]
    size = f"{len(exp['items'])} items x {exp['repeats']} repeats"
    lines = [f"experiment {exp['id']} ({exp['status']}): {size}"]
    for a in report["arms"]:
        c, lat = a["counts"], a["latency"]
        gen, judged, total = (_usd(a[k]["per_pass_usd"]) for k in COST_KINDS)
        rate = "n/a" if a["pass_rate"] is None else f"{a['pass_rate'] * 100:.1f} %"
        lines.append(
            f"  {a['arm']}: pass {c['pass']}/{a['cases']} ({rate}), fail {c['fail']}, "
            f"pending {c['pending']}, incomplete {c['incomplete']}, running {c['running']}; "
            f"cost/pass: generation {gen}, judging {judged}, total {total}; "
            f"p50 {_ms(lat['p50_ms'])}, p95 {_ms(lat['p95_ms'])} "
            f"({lat['timeouts']} timeouts)"
        )
    lines += feedback_lines(report.get("feedback") or [])
    for cmp in report["comparisons"]:
        t, d = cmp["table"], cmp["difference"]
        ci = "n/a" if d["low"] is None else f"[{d['low'] * 100:+.1f} %, {d['high'] * 100:+.1f} %]"
        point = "n/a" if d["point"] is None else f"{d['point'] * 100:+.1f} %"
        lines.append(
            f"  {cmp['a']} vs {cmp['b']}: both pass {t['both_pass']}, only {cmp['a']} "
            f"{t['only_a']}, only {cmp['b']} {t['only_b']}, both fail {t['both_fail']}, "
            f"undecided {t['undecided']}; McNemar p = {cmp['mcnemar_p']:.4g}; "
            f"difference {point} (95 % bootstrap {ci})"
        )
    return lines
