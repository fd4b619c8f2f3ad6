"""Family-weighted pass rates and slices by a dimension, checked against hand computations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from regua.errors import InputError
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.reports import ReportRow
from service.reports.build import ReportConfig, build_report
from service.reports.html import render_html
from service.reports.slices import weighted_view
from service.server import create_app
from service.storage import TaskRow
from tests.helpers.report_sample import seed_database
from tests.helpers.reports import counts, runs
from tests.helpers.server import http_client
from tests.helpers.web import web_login

DIMS = {
    "heron-bicycle@1": {"subject": "heron", "vehicle": "bicycle"},
    "heron-tram@1": {"subject": "heron", "vehicle": "tram"},
    "heron-boat@1": {"subject": "heron", "vehicle": "boat"},
    "stork-bicycle@1": {"subject": "stork", "vehicle": "bicycle"},
    "stork-bicycle@2": {"subject": "stork", "vehicle": "bicycle"},
    "pelican-plain@1": {},
}


def _rows() -> list[ReportRow]:
    """Model m: herons 1.0, 0.5, 0.0 (three variants); stork@2 1 pass 2 fail 1 pending
    1 incomplete, stork@1 all pass (both versions count, each on its own); pelican 3 pass 1 fail
    (no dimensions)."""
    return (
        runs("m", counts(2, 0, 0), "heron-bicycle@1", "herons")
        + runs("m", counts(1, 1, 0), "heron-tram@1", "herons")
        + runs("m", counts(0, 2, 0), "heron-boat@1", "herons")
        + runs("m", counts(5, 0, 0), "stork-bicycle@1", "storks")
        + runs("m", counts(1, 2, 1, 1), "stork-bicycle@2", "storks")
        + runs("m", counts(3, 1, 0), "pelican-plain@1", "pelican")
    )


def _by_value(view: dict[str, object]) -> dict[str, dict[str, object]]:
    rows = view["rows"]
    assert isinstance(rows, list)
    return {r["value"]: r for r in rows}


def test_family_weighting_by_hand() -> None:
    view = weighted_view(_rows(), DIMS, "family")
    fam = _by_value(view)
    # herons: tasks 1.0, 0.5, 0.0 weigh the same -> 0.5; storks: version 1 all pass (1.0) and
    # version 2 (n = 4, incomplete left out: 1/4 to 2/4, decided 1/3) weigh the same; pelican 3/4
    assert fam["herons"]["lower"] == pytest.approx(0.5)
    assert fam["herons"]["families"] == {
        "herons": {"tasks": 3, "lower": 0.5, "upper": 0.5, "decided_rate": 0.5}
    }
    assert (fam["storks"]["lower"], fam["storks"]["upper"]) == (0.625, 0.75)
    assert fam["storks"]["decided_rate"] == pytest.approx((1 + 1 / 3) / 2)
    assert fam["storks"]["versions"] == [
        {"task_ref": "stork-bicycle@1", "runs": 5},
        {"task_ref": "stork-bicycle@2", "runs": 4},
    ]
    overall = view["overall"][0]
    assert overall["lower"] == pytest.approx((0.5 + 0.625 + 0.75) / 3)
    assert overall["upper"] == pytest.approx((0.5 + 0.75 + 0.75) / 3)
    assert overall["decided_rate"] == pytest.approx((0.5 + 2 / 3 + 0.75) / 3)
    # pooled over runs it would be 12 passes of 19 runs
    assert (overall["runs"], overall["runs_pooled_rate"]) == (19, 12 / 19)
    assert len(overall["versions"]) == 6


def test_slice_by_dimension_by_hand() -> None:
    view = weighted_view(_rows(), DIMS, "dimension:vehicle")
    by = _by_value(view)
    assert sorted(by) == ["bicycle", "boat", "tram"]
    # bicycle: herons family (1.0) and storks family (5/8 to 3/4, decided 2/3) weigh the same
    assert by["bicycle"]["lower"] == pytest.approx((1.0 + 0.625) / 2)
    assert by["bicycle"]["upper"] == pytest.approx((1.0 + 0.75) / 2)
    assert by["bicycle"]["decided_rate"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert (by["tram"]["lower"], by["boat"]["lower"]) == (0.5, 0.0)
    assert view["tasks_without_dimension"] == ["pelican-plain@1"]
    assert view["dimensions_available"] == ["subject", "vehicle"]
    subject = _by_value(weighted_view(_rows(), DIMS, "dimension:subject"))
    assert subject["heron"]["decided_rate"] == pytest.approx(0.5)
    assert (subject["stork"]["lower"], subject["stork"]["upper"]) == (0.625, 0.75)


def test_thirty_near_copies_do_not_outweigh_a_family_of_three() -> None:
    rows: list[ReportRow] = []
    for i in range(30):
        rows += runs("m", counts(1, 0, 0), f"copy-{i}@1", "copies")
    for i in range(3):
        rows += runs("m", counts(0, 1, 0), f"other-{i}@1", "others")
    overall = weighted_view(rows, {}, "family")["overall"][0]
    assert overall["decided_rate"] == pytest.approx(0.5)
    assert overall["runs_pooled_rate"] == pytest.approx(30 / 33)


def test_bad_by_is_refused() -> None:
    for bad in ("families", "dimension:", "vehicle"):
        with pytest.raises(InputError, match="by must be 'family' or 'dimension:NAME'"):
            weighted_view(_rows(), DIMS, bad)


def test_report_page_shows_the_view() -> None:
    cfg = ReportConfig(resamples=0, by="dimension:vehicle")
    report = build_report(_rows(), cfg, task_dimensions=DIMS)
    page = render_html(report)
    assert "By dimension “vehicle”: each family equal, each task version equal within it" in page
    assert '<td>bicycle</td><td class="range">81 % \u2013 88 %</td><td>83 %</td>' in page
    assert "Tasks without this dimension, left out: pelican-plain@1" in page


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[httpx.Client, Path, str]]:
    settings = Settings(data_dir=tmp_path / "data")
    ctx = ServiceContext.open(settings)
    seed_database(ctx.db, _rows())
    with ctx.db.write() as s:  # the dimensions a template variant records in its spec
        for row in s.scalars(select(TaskRow)):
            row.spec = dict(row.spec) | {"dimensions": DIMS[row.ref]}
    admin = create_token(ctx.db, "admin", "admin")[0]
    try:
        with http_client(create_app(ctx), Authorization=f"Bearer {admin}") as client:
            yield client, settings.data_dir, admin
    finally:
        ctx.close()


def test_service_report_by_dimension(served: tuple[httpx.Client, Path, str]) -> None:
    client, data_dir, admin = served
    got = client.get("/v1/reports", params={"by": "dimension:vehicle", "resamples": 0})
    assert got.status_code == 200, got.text
    by = _by_value(got.json()["weighted"])
    assert by["bicycle"]["lower"] == pytest.approx(0.8125)
    assert by["tram"]["decided_rate"] == pytest.approx(0.5)
    bad = client.get("/v1/reports", params={"by": "colour"})
    assert bad.status_code == 422 and "dimension:NAME" in bad.json()["detail"]
    page = client.get("/v1/reports/html", params={"by": "family", "resamples": 0})
    assert "By family: each family equal" in page.text
    web_login(client, admin)  # the report page of the web UI takes the same choice
    full = client.get("/report/full", params={"by": "dimension:vehicle"})
    assert full.status_code == 200 and "By dimension “vehicle”" in full.text
    wrong = client.get("/report/full", params={"by": "colour"})
    assert wrong.status_code == 422 and "dimension:NAME" in wrong.text
    from service.cli import app

    out = data_dir.parent / "report"
    args = ["report", "--out", str(out), "--format", "json", "--resamples", "0"]
    cli = CliRunner().invoke(app, [*args, "--by", "family", "--data-dir", str(data_dir)])
    assert cli.exit_code == 0, cli.output
    assert "core  m  herons: pass rate 50 % to 50 %, decided 50 %" in cli.output
    csv_args = ["report", "--out", str(out), "--format", "csv", "--resamples", "0"]
    by_vehicle = ["--by", "dimension:vehicle", "--data-dir", str(data_dir)]
    cli = CliRunner().invoke(app, [*csv_args, *by_vehicle])
    assert cli.exit_code == 0, cli.output
    table = (out / "weighted.csv").read_text().splitlines()
    assert table[0].startswith("by,pool,model,value,lower,upper,decided_rate")
    assert "dimension:vehicle,core,m,bicycle,0.8125,0.875," in table[1]
