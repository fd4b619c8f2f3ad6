"""Reports never pool runs judged by a mock panel with runs judged by a live one.

What the user would otherwise see: one model row whose pass rate mixes the demo's mock
decisions with a real judge's. Stored: two runs per panel under one model label; the report
shows two groups, the mock one named ``LABEL [MOCK pelican-bicycle-mock@1]``.
"""

from __future__ import annotations

import json
from pathlib import Path

from service.reports.db import generate_report, load_report_inputs
from service.storage import Database
from tests.helpers.report_sample import seed_database
from tests.helpers.reports import runs

MOCK = "pelican-bicycle-mock@1"


def test_mock_and_live_judged_runs_of_one_label_are_reported_apart(tmp_path: Path) -> None:
    mock = runs("m", ["pass", "pass"], task_ref="pelican-bicycle-structured@2")
    live = runs("m", ["fail", "fail"], task_ref="pelican-bicycle-structured@2")
    rows = [
        *(r._replace(judge_panel_id=MOCK) for r in mock),
        *(
            r._replace(
                run_id=f"{r.run_id}-live",
                item_key=f"{r.item_key}-live",
                evaluation_id=f"{r.evaluation_id}-live",
                judge_panel_id="pelican-bicycle-vision@1",
            )
            for r in live
        ),
    ]
    db = Database(f"sqlite:///{tmp_path / 'regua.sqlite3'}")
    try:
        seed_database(db, rows)
        with db.read() as s:
            inputs = load_report_inputs(s)
            report, _ = generate_report(s, [])
    finally:
        db.dispose()
    by_model: dict[str, set[str]] = {}
    for row in inputs.rows:
        by_model.setdefault(row.model, set()).add(row.outcome)
    assert by_model == {f"m [MOCK {MOCK}]": {"pass"}, "m": {"fail"}}
    assert f"m [MOCK {MOCK}]" in json.dumps(report)
