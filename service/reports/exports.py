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
from service.reports.revisions import CHAIN_HEADER, SERIES_HEADER, chain_rows, series_rows
from service.reports.rows import ReportRow
from service.reports.tables import REPORT_TABLES, run_rows
from service.reports.tables import summary_rows as summary_rows

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


def write_csv(
    report: dict[str, Any], out_dir: Path, rows: Sequence[ReportRow] | None = None
) -> list[Path]:
    """Write every table of the report as CSV files in ``out_dir``; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [_write(out_dir / name, *table(report)) for name, table in REPORT_TABLES]
    section = report.get("revisions") or {}
    if section.get("groups"):  # render-and-revise series, apart from the first answers
        written.append(_write(out_dir / "revision_series.csv", SERIES_HEADER, series_rows(section)))
        written.append(_write(out_dir / "revision_chains.csv", CHAIN_HEADER, chain_rows(section)))
    if rows is not None:
        written.append(_write(out_dir / "runs.csv", *run_rows(rows)))
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
    """Write the chosen formats into ``out_dir``; returns every path written.

    ``html`` writes ``report.html`` and ``report.css``, ``json`` writes ``report.json`` and
    ``csv`` the CSV tables.
    """
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
