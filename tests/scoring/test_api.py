"""HTTP and CLI surface of calibration storage and re-scoring, on the fake pipeline (no Chromium):
``/v1/calibrations``, ``/v1/gate``, ``/v1/evaluations`` (+ ``/diff``), ``regua rescore``, and the
re-render path when the rubric's render profile changed. The background (202) paths are in
``test_api_jobs.py``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from judges.calibration import CalibrationRun, load_bundled_set, run_calibration
from regua.settings import Settings
from service.api import create_app
from service.auth import create_token
from service.cli import app as cli_app
from service.context import ServiceContext
from service.db import Evaluation, RenderRecord, Run
from service.pipeline import advance
from service.scoring.calibrate import should_store
from service.scoring.rescore import rescore
from service.stages import STAGES
from service.submission import Submission, submit
from tests.scoring.factory import TASK
from tests.service.conftest import _reset_pg, pg_url  # noqa: F401  (pg_url is a fixture)
from tests.service.fakes import FakeRenderer, fake_components

SVG = (Path(__file__).resolve().parents[2] / "samples/outputs/structured-good.svg").read_text()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ServiceContext, list[str], FakeRenderer]]:
    """Three finished runs through the fake pipeline (SQLite, and PostgreSQL when it answers)."""
    url = None
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        _reset_pg(url)
    settings = Settings(data_dir=tmp_path / "data", database_url=url, queue_capacity=50)
    ctx = ServiceContext.open(settings, fake_components)
    renderer = FakeRenderer()
    comps = fake_components(settings, renderer)
    subs = [Submission(TASK, "m", SVG.replace("</svg>", f"<!-- {i} --></svg>")) for i in range(3)]
    ids = submit(ctx, subs, None)
    for run_id in ids:
        assert advance(ctx.db, ctx.blobs, comps, run_id, STAGES)
    yield ctx, ids, renderer
    ctx.close()


def _client(ctx: ServiceContext, role: str) -> TestClient:
    token, _ = create_token(ctx.db, role, role)
    client = TestClient(create_app(ctx))
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def _small_run() -> CalibrationRun:
    """A cheap run: a judge that passes everything (rejected by the gate: missed criticals)."""
    bundle = load_bundled_set()
    return run_calibration("yes", "geometry@1", bundle.calibration_set, lambda i, r: "pass",
                           repeats=1, n_boot=100)  # fmt: skip


def test_calibrations_import_get_and_gate(
    world: tuple[ServiceContext, list[str], FakeRenderer],
) -> None:
    ctx = world[0]
    run = _small_run()
    admin, submitter = _client(ctx, "admin"), _client(ctx, "submitter")
    assert submitter.get("/v1/gate").status_code == 403
    assert submitter.post("/v1/calibrations", json={"run": run.to_dict()}).status_code == 403
    posted = admin.post("/v1/calibrations", json={"run": run.to_dict()})
    assert posted.status_code == 201, posted.text
    assert posted.json()["id"] == run.run_id
    got = admin.get(f"/v1/calibrations/{run.run_id}").json()
    assert CalibrationRun.from_dict(got["run"]) == run
    assert admin.get("/v1/calibrations/nope").status_code == 404
    assert [c["id"] for c in admin.get("/v1/calibrations").json()["calibrations"]] == [run.run_id]
    gate = admin.get("/v1/gate").json()["decisions"]
    assert gate and not any(d["passed"] for d in gate)
    assert any("missed-critical" in r for d in gate for r in d["reasons"])
    assert admin.post("/v1/calibrations", json={}).status_code == 422


def test_rescore_over_http_appends_and_diffs(
    world: tuple[ServiceContext, list[str], FakeRenderer],
) -> None:
    ctx, ids, renderer = world
    calls = renderer.calls
    admin = _client(ctx, "admin")
    assert _client(ctx, "submitter").post("/v1/evaluations", json={}).status_code in (403, 422)
    body = {"task": TASK, "panel": "pelican-bicycle-default@1", "runs": ids[:2], "wait": True}
    res = admin.post("/v1/evaluations", json=body)  # wait: re-scored inside the request
    assert res.status_code == 201, res.text
    out = res.json()
    assert out["appended"] == 2 and out["rendered_nothing"] and renderer.calls == calls
    with ctx.db.read() as s:
        assert s.scalar(select(func.count(Evaluation.id))) == 5
        for e in out["evaluations"]:
            new = s.get(Evaluation, e["evaluation_id"])
            assert new is not None and new.kind == "rescore"
            assert new.supersedes_id == e["supersedes_id"] is not None
    diff = admin.get("/v1/evaluations/diff", params={"a": f"previous:{out['batch_id']}",
                                                     "b": out["batch_id"]})  # fmt: skip
    assert diff.status_code == 200, diff.text
    assert diff.json()["runs_compared"] == 2
    assert admin.get("/v1/evaluations/diff", params={"a": "x", "b": "y"}).status_code == 404
    bad = admin.post("/v1/evaluations", json={**body, "runs": ["nope"]})
    assert bad.status_code == 404


def test_changed_render_profile_rerenders_through_the_render_stage(
    world: tuple[ServiceContext, list[str], FakeRenderer],
) -> None:
    ctx, ids, renderer = world
    task = ctx.registry.get(TASK)
    rubric = task.model_copy(update={"render": task.render.model_copy(update={"id": "wide@2"})})
    calls = renderer.calls
    result = rescore(ctx.db, ctx.blobs, task_ref=TASK, panel_id="pelican-bicycle-default@1",
                     run_ids=ids[:1], rubric=rubric, renderer=renderer)  # fmt: skip
    assert result.rerendered == ids[:1] and renderer.calls == calls + 1
    with ctx.db.read() as s:
        profiles = s.scalars(select(RenderRecord.render_profile_id).where(
            RenderRecord.run_id == ids[0]).order_by(RenderRecord.id)).all()  # fmt: skip
        assert profiles[-1] == "wide@2"
        run = s.get(Run, ids[0])
        assert run is not None
        ev = s.get(Evaluation, run.current_evaluation_id)
        assert ev is not None and ev.render_profile_id == "wide@2"
    # without a renderer the run is skipped with the reason, never judged on stale frames
    again = rescore(ctx.db, ctx.blobs, task_ref=TASK, panel_id="pelican-bicycle-default@1",
                    run_ids=ids[1:2], rubric=rubric)  # fmt: skip
    assert again.appended == [] and "render profile changed" in again.skipped[ids[1]]


def test_cli_rescore_and_compare(
    world: tuple[ServiceContext, list[str], FakeRenderer], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = world[0]
    data_dir = ctx.settings.data_dir
    if ctx.settings.database_url:
        monkeypatch.setenv("REGUA_DATABASE_URL", ctx.settings.database_url)
    runner = CliRunner()
    args = ["rescore", "--task", TASK, "--panel", "pelican-bicycle-default@1"]
    res = runner.invoke(cli_app, [*args, "--data-dir", str(data_dir), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["appended"] == 3 and out["rerendered"] == []
    cmp = runner.invoke(cli_app, ["rescore", "--compare", f"previous:{out['batch_id']}",
                                  out["batch_id"], "--data-dir", str(data_dir)])  # fmt: skip
    assert cmp.exit_code == 0, cmp.output
    assert "3 runs compared" in cmp.output and "outcome: 0/3 moved" in cmp.output
    assert runner.invoke(cli_app, ["rescore", "--data-dir", str(data_dir)]).exit_code == 2


def test_should_store_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REGUA_DATA_DIR", raising=False)
    monkeypatch.delenv("REGUA_DATABASE_URL", raising=False)
    assert should_store(None, None) is False
    assert should_store(None, tmp_path) is True
    assert should_store(False, tmp_path) is False
    monkeypatch.setenv("REGUA_DATA_DIR", str(tmp_path))
    assert should_store(None, None) is True


def test_cli_calibrate_data_dir_stores_the_run_and_its_decisions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from service.cli import calibrate_cmd
    from service.db import Database
    from service.scoring.calibration import latest_eligibility, stored_decisions
    from service.scoring.models import CalibrationRunRow

    def fake_pipeline(*_a: object, **_k: object) -> tuple[object, object]:
        return (lambda item, repeat: "pass"), (lambda: None)  # passes everything: rejected

    monkeypatch.setattr(calibrate_cmd, "pipeline_verdict_fn", fake_pipeline)
    data_dir = tmp_path / "data"
    args = ["calibrate", "--judge", "geometry@1", "--n-boot", "100", "--data-dir", str(data_dir)]
    res = CliRunner().invoke(cli_app, args)
    assert res.exit_code == 0, res.output
    assert "stored calibration run" in res.output
    db = Database(Settings(data_dir=data_dir, database_url=None).resolved_database_url())
    with db.read() as s:
        rows = s.scalars(select(CalibrationRunRow)).all()
        assert len(rows) == 1 and rows[0].profile_id == "geometry@1"
        decisions = stored_decisions(s)
        assert decisions and all(d.run_id == rows[0].id for d in decisions)
        table = latest_eligibility(s)
    assert table and not any(table.values())  # the pass-everything judge earns no vote
    db.dispose()
