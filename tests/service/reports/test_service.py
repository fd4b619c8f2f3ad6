"""The database adapter, ``GET /v1/reports`` and ``regua report`` over a real service database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from regua.errors import NotFoundError
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.reports.db import generate_report, load_report_inputs, panel_id
from service.server import create_app
from service.storage import Database, Run
from tests.helpers.report_sample import seed_database, synthetic_rows
from tests.helpers.server import http_client

ROWS = synthetic_rows(models=3, items=8)


@pytest.fixture
def ctx(tmp_path: Path, database_url: str) -> Iterator[ServiceContext]:
    """A service context over a fresh database (SQLite; PostgreSQL when it answers)."""
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url)
    context = ServiceContext.open(settings)
    seed_database(context.db, ROWS, judges=2)
    yield context
    context.close()


def test_adapter_reads_back_exactly_the_stored_rows(ctx: ServiceContext) -> None:
    with ctx.db.read() as s:
        inputs = load_report_inputs(s)
    assert len(inputs.rows) == len(ROWS)
    stored = {r.run_id: r for r in ROWS}
    for row in inputs.rows:
        want = stored[row.run_id]
        assert (row.task_ref, row.family, row.pool, row.model, row.outcome) == (
            want.task_ref,
            want.family,
            want.pool,
            want.model,
            want.outcome,
        )
        assert (row.item_key, row.repeat, dict(row.criteria)) == (
            want.item_key,
            want.repeat,
            dict(want.criteria),
        )
        assert (row.cost_usd, row.latency_ms, row.timed_out) == (
            want.cost_usd,
            want.latency_ms,
            want.timed_out,
        )
        assert row.judge_panel_id == "panel-geometry@1"
    assert inputs.votes and {v.judge_profile_id for v in inputs.votes} == {"judge-0", "judge-1"}
    assert set(inputs.task_hashes) == {r.task_ref for r in ROWS}


def test_task_filter_by_version_or_by_id(ctx: ServiceContext) -> None:
    with ctx.db.read() as s:
        one = load_report_inputs(s, ["pelican-bicycle@2"])
        every = load_report_inputs(s, ["pelican-bicycle"])
        model = load_report_inputs(s, ["crab-kite@1"], models=["model-a"])
    assert {r.task_ref for r in one.rows} == {"pelican-bicycle@2"}
    assert {r.task_ref for r in every.rows} == {"pelican-bicycle@1", "pelican-bicycle@2"}
    assert {(r.task_ref, r.model) for r in model.rows} == {("crab-kite@1", "model-a")}


def test_unfinished_runs_are_left_out_and_counted(ctx: ServiceContext) -> None:
    with ctx.db.write() as s:
        s.execute(update(Run).where(Run.task_ref == "crab-kite@1").values(status="running"))
    with ctx.db.read() as s:
        report, inputs = generate_report(s, ["crab-kite", "heron-skateboard"])
        with pytest.raises(NotFoundError, match="still queued or running"):
            generate_report(s, ["crab-kite"])
    assert inputs.unfinished_runs == 3 * 8 * 2
    assert report["provenance"]["filters"]["unfinished_runs_left_out"] == 48


def test_panel_id_falls_back_to_a_hash() -> None:
    assert panel_id({"id": "p@1", "x": 1}) == "p@1"
    assert panel_id({"profiles": ["a"]}) == panel_id({"profiles": ["a"]})
    assert str(panel_id({"profiles": ["a"]})).startswith("sha256:")
    assert panel_id({}) is None


def test_http_report_json_html_css_and_roles(ctx: ServiceContext) -> None:
    admin, _ = create_token(ctx.db, "admin", "admin")
    reviewer, _ = create_token(ctx.db, "reviewer", "rev")
    submitter, alice = create_token(ctx.db, "submitter", "alice")
    with ctx.db.write() as s:
        s.execute(
            update(Run).where(Run.model_label == "model-b").values(submitted_by=alice.token_id)
        )
    with http_client(create_app(ctx)) as client:

        def get(path: str, token: str | None, **params: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            response: httpx.Response = client.get(path, params=params, headers=headers)
            return response

        res = get("/v1/reports", admin, task="pelican-bicycle@1", group_by="model")
        assert res.status_code == 200
        body = res.json()
        assert [tv["task_ref"] for tv in body["task_versions"]] == ["pelican-bicycle@1"]
        assert {g["model"] for g in body["task_versions"][0]["groups"]} == {
            "model-a",
            "model-b",
            "model-c",
        }
        assert body["provenance"]["evaluation_ids"] is None
        assert len(body["provenance"]["evaluation_ids_sha256"]) == 64

        mine = get("/v1/reports", submitter, task="pelican-bicycle@1").json()
        assert {g["model"] for g in mine["task_versions"][0]["groups"]} == {"model-b"}
        assert get("/v1/reports", reviewer).status_code == 403
        assert get("/v1/reports", None).status_code == 401
        assert get("/v1/reports", admin, task="nope@1").status_code == 404
        assert get("/v1/reports", admin, group_by="colour").status_code == 422

        page = get("/v1/reports/html", admin, task="crab-kite")
        assert page.status_code == 200
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "/v1/reports/report.css" in page.text
        css = get("/v1/reports/report.css", None)
        assert css.status_code == 200
        assert css.headers["content-type"].startswith("text/css")
        table = get("/v1/reports/summary.csv", admin, task="crab-kite@1")
        assert table.text.splitlines()[0].startswith("task_ref,family,pool,group")


def test_cli_writes_html_csv_and_json(ctx: ServiceContext, tmp_path: Path) -> None:
    from service.cli import app

    out = tmp_path / "report"
    data_dir = ctx.settings.data_dir
    runner = CliRunner(env={"REGUA_DATABASE_URL": ctx.settings.resolved_database_url()})
    result = runner.invoke(
        app,
        ["report", "--task", "pelican-bicycle", "--out", str(out), "--data-dir", str(data_dir)],
    )
    assert result.exit_code == 0, result.output
    assert "pelican-bicycle@1" in result.output and "pass rate between" in result.output
    assert (out / "report.html").is_file() and (out / "report.css").is_file()
    report = json.loads((out / "report.json").read_text())
    assert report["provenance"]["task_versions"] == ["pelican-bicycle@1", "pelican-bicycle@2"]
    assert (out / "summary.csv").is_file() and (out / "runs.csv").is_file()

    only_json = runner.invoke(
        app,
        [
            "report",
            "--task",
            "crab-kite@1",
            "--format",
            "json",
            "--out",
            str(tmp_path / "j"),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert only_json.exit_code == 0, only_json.output
    assert sorted(p.name for p in (tmp_path / "j").iterdir()) == ["report.json"]
    missing = runner.invoke(
        app,
        ["report", "--task", "nope@1", "--out", str(tmp_path / "n"), "--data-dir", str(data_dir)],
    )
    assert missing.exit_code == 2 and "no finished runs" in missing.output


def test_database_url_setting_is_honoured(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    seed_database(db, ROWS[:10])
    with db.read() as s:
        assert len(load_report_inputs(s).rows) == 10
    db.dispose()
