"""HTML page, SVG charts, CSV and JSON exports."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from regua.errors import InputError
from service.reports import build_report
from service.reports.exports import FORMATS, write_outputs
from service.reports.html import render_html, stylesheet
from tests.helpers.report_sample import synthetic_rows
from tests.helpers.reports import counts, runs

EVIL = '<script>alert(1)</script>"=cmd'


def _report() -> dict[str, Any]:

    rows = runs("model-a", counts(72, 18, 10))
    rows = [r._replace(criteria={"C1": "pass", "C2": "uncertain"}) for r in rows]
    rows += runs(EVIL, counts(40, 50, 10))
    return build_report(rows)


def test_html_has_charts_and_the_pending_range_and_nothing_a_strict_csp_blocks() -> None:
    page = render_html(_report())
    assert "between 72 % and 82 %" in page
    assert "range from pending labels, not a confidence interval" in page
    assert page.count("<svg") == 4  # pool ranking, bars, heat map, strengths
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        assert 'role="img"' in svg and "<title" in svg and "<desc" in svg
    assert "<script" not in page.lower()
    assert "style=" not in page.lower()
    assert "<style" not in page.lower()
    assert re.search(r"\son[a-z]+=", page) is None  # no event handler attributes
    assert '<link rel="stylesheet" href="report.css">' in page


def test_untrusted_labels_are_escaped_everywhere() -> None:
    page = render_html(_report())
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_stylesheet_is_shipped() -> None:
    assert ".versions" in stylesheet()


def test_write_outputs_writes_every_format(tmp_path: Path) -> None:
    rows = synthetic_rows(models=3, items=12)
    report = build_report(rows)
    paths = write_outputs(report, tmp_path, FORMATS, rows)
    names = {p.name for p in paths}
    assert {"report.html", "report.css", "report.json", "summary.csv", "runs.csv"} <= names
    assert {"criteria.csv", "paired.csv", "bradley_terry.csv", "families.csv"} <= names
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["schema"] == "regua.report/1"
    with (tmp_path / "summary.csv").open() as fh:
        summary = list(csv.DictReader(fh))
    assert len(summary) == sum(len(tv["groups"]) for tv in report["task_versions"])
    first = report["task_versions"][0]["groups"][0]
    assert float(summary[0]["pass_rate_lower"]) == first["pass_range"]["lower"]
    assert summary[0]["range_label"] == "range from pending labels, not a confidence interval"
    with (tmp_path / "runs.csv").open() as fh:
        traced = list(csv.DictReader(fh))
    assert len(traced) == len(rows)
    assert traced[0]["evaluation_id"] == rows[0].evaluation_id


def test_csv_guards_against_spreadsheet_formulas(tmp_path: Path) -> None:
    report = build_report(runs("=HYPERLINK(1)", ["pass"]) + runs("ok", ["fail"]))
    write_outputs(report, tmp_path, ["csv"])
    with (tmp_path / "summary.csv").open() as fh:
        groups = [row["group"] for row in csv.DictReader(fh)]
    assert "'=HYPERLINK(1)" in groups


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown report format"):
        write_outputs(_report(), tmp_path, ["pdf"])
