"""Report generation time for 100,000 stored verdicts beside the time to just read them.

20 models x 5,000 runs each (5 task versions x 500 items x 2 repeats, 5 criteria per run) are
stored with the service's own tables in a fresh SQLite database. In the same process we time:

* ``read``   — the SELECTs a report needs (runs ⨝ current evaluations, criterion outcomes),
  fetched into Python tuples and nothing else: the floor any report pays;
* ``adapter`` — :func:`service.reports.db.load_report_inputs` (same queries + building rows);
* ``report`` — :func:`service.reports.build_report` on those rows (every figure, 1,000 bootstrap
  resamples for each interval) plus serialising it to JSON;
* ``html``   — rendering the HTML page with its SVG charts.

Target: ``report`` <= 3 x ``read``. Usage: ``.venv/bin/python benchmarks/report.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.reports import ReportConfig, build_report
from service.reports.db import load_report_inputs
from service.reports.html import render_html
from service.storage import CriterionOutcomeRow, Database, Evaluation, Run
from tests.helpers.report_sample import seed_database, synthetic_rows

TASKS = (
    ("pelican-bicycle@1", "pelican", "core"),
    ("pelican-bicycle@2", "pelican", "core"),
    ("heron-skateboard@1", "animals", "core"),
    ("crab-kite@1", "animals", "rotating"),
    ("otter-violin@1", "instruments", "rotating"),
)


def interleaved(steps: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, Any]]:
    """Run the steps in turn ``repeat`` times (so load changes hit all of them alike).

    Returns each step's median wall time and its last result.
    """
    times: dict[str, list[float]] = {name: [] for name in steps}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in steps.items():
            start = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(times[name]), results[name]) for name in steps}


def raw_read(db: Database) -> int:
    """Fetch exactly what a report needs, as plain tuples."""
    with db.read() as s:
        runs = s.execute(
            select(
                Run.id,
                Run.task_pk,
                Run.model_label,
                Run.model_provider,
                Run.model_params,
                Run.outcome,
                Run.current_evaluation_id,
                Evaluation.outcome,
                Evaluation.judge_panel,
            ).outerjoin(Evaluation, Evaluation.id == Run.current_evaluation_id)
        ).all()
        crits = s.execute(
            select(
                CriterionOutcomeRow.evaluation_id,
                CriterionOutcomeRow.criterion,
                CriterionOutcomeRow.status,
            ).join(Run, Run.current_evaluation_id == CriterionOutcomeRow.evaluation_id)
        ).all()
    return len(runs) + len(crits)


def main() -> None:
    """Seed, time, print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5, help="timing repetitions (median)")
    ap.add_argument("--html-out", type=Path, default=None, help="also write the HTML page here")
    args = ap.parse_args()

    rows = synthetic_rows(models=args.models, tasks=TASKS, items=args.items, repeats=args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")
        start = time.perf_counter()
        seed_database(db, rows)
        seeded = time.perf_counter() - start
        with db.read() as session:
            inputs = load_report_inputs(session, include_votes=False, include_audits=False)
        cfg = ReportConfig(include_run_ids=True)

        def adapter() -> Any:
            with db.read() as session:
                return load_report_inputs(session, include_votes=False, include_audits=False)

        def report_json() -> Any:
            report = build_report(inputs.rows, cfg)
            json.dumps(report, allow_nan=False)
            return report

        timings = interleaved(
            {"read": lambda: raw_read(db), "adapter": adapter, "report": report_json},
            args.repeat,
        )
        read_s, fetched = timings["read"]
        adapter_s, _ = timings["adapter"]
        report_s, report = timings["report"]
        html_s, page = interleaved({"html": lambda: render_html(report)}, args.repeat)["html"]
        db.dispose()
    if args.html_out:
        args.html_out.write_text(page, encoding="utf-8")
    n = len(inputs.rows)
    print(
        f"stored verdicts: {n:,} runs ({args.models} models; {len(TASKS)} task versions; "
        f"5 criteria each → {fetched - n:,} criterion rows); seeding took {seeded:.1f} s"
    )
    print(f"read (SQL → tuples)       {read_s:8.3f} s")
    print(f"adapter (read → rows)     {adapter_s:8.3f} s")
    print(f"report (rows → JSON)      {report_s:8.3f} s   ratio to read {report_s / read_s:5.2f}x")
    print(f"html page                 {html_s:8.3f} s")
    total = adapter_s + report_s
    print(f"adapter + report          {total:8.3f} s   ratio to read {total / read_s:5.2f}x")
    verdict = "OK" if report_s <= 3 * read_s else "OVER TARGET"
    print(f"target report <= 3x read: {verdict}")


if __name__ == "__main__":
    main()
