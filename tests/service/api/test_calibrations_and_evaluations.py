"""HTTP and CLI surface of calibration storage and re-scoring, on the real pipeline:
``/v1/calibrations``, ``/v1/gate``, ``/v1/evaluations`` (+ ``/diff``), ``regua rescore``, and the
re-render path when the rubric's render profile changed. The background (202) paths are in
``tests/service/evaluation/test_rescore_jobs.py``."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from judges.calibration import CalibrationRun, load_bundled_set, run_calibration
from service.cli import app as cli_app
from service.evaluation.rescore import rescore
from service.pipeline.rerender import rerenderer
from service.storage import Evaluation, RenderRecord, Run
from tests.helpers.runs import TASK
from tests.service.conftest import World

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]


def _small_run() -> CalibrationRun:
    """A cheap run: a judge that passes everything (rejected by the gate: missed criticals)."""
    bundle = load_bundled_set()
    return run_calibration(
        "yes", "geometry@1", bundle.calibration_set, lambda _i, _r: "pass", repeats=1, n_boot=100
    )


def test_calibrations_import_get_and_gate(
    world: World,
) -> None:
    run = _small_run()
    admin, submitter = world.client("admin"), world.client("submitter")
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
    world: World,
) -> None:
    ctx, ids, renderer = world.ctx, world.ids, world.renderer
    calls = renderer.calls
    admin = world.client("admin")
    assert world.client("submitter").post("/v1/evaluations", json={}).status_code in (403, 422)
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
    params = {"a": f"previous:{out['batch_id']}", "b": out["batch_id"]}
    diff = admin.get("/v1/evaluations/diff", params=params)
    assert diff.status_code == 200, diff.text
    assert diff.json()["runs_compared"] == 2
    assert admin.get("/v1/evaluations/diff", params={"a": "x", "b": "y"}).status_code == 404
    bad = admin.post("/v1/evaluations", json={**body, "runs": ["nope"]})
    assert bad.status_code == 404


def test_changed_render_profile_rerenders_through_the_render_stage(
    world: World,
) -> None:
    ctx, ids, renderer = world.ctx, world.ids, world.renderer
    task = ctx.registry.get(TASK)
    rubric = task.model_copy(update={"render": task.render.model_copy(update={"id": "wide@2"})})
    calls = renderer.calls
    result = rescore(
        ctx.db,
        ctx.blobs,
        task_ref=TASK,
        panel_id="pelican-bicycle-default@1",
        run_ids=ids[:1],
        rubric=rubric,
        rerender=rerenderer(ctx.db, ctx.blobs, ctx.machinery),
    )
    assert result.rerendered == ids[:1] and renderer.calls == calls + 1
    with ctx.db.read() as s:
        profiles = s.scalars(
            select(RenderRecord.render_profile_id)
            .where(RenderRecord.run_id == ids[0])
            .order_by(RenderRecord.id)
        ).all()
        assert profiles[-1] == "wide@2"
        run = s.get(Run, ids[0])
        assert run is not None
        ev = s.get(Evaluation, run.current_evaluation_id)
        assert ev is not None and ev.render_profile_id == "wide@2"
    # without a renderer the run is skipped with the reason, never judged on stale frames
    again = rescore(
        ctx.db,
        ctx.blobs,
        task_ref=TASK,
        panel_id="pelican-bicycle-default@1",
        run_ids=ids[1:2],
        rubric=rubric,
    )
    assert again.appended == [] and "render profile changed" in again.skipped[ids[1]]


def test_cli_rescore_and_compare(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = world.ctx
    data_dir = ctx.settings.data_dir
    if ctx.settings.database_url:
        monkeypatch.setenv("REGUA_DATABASE_URL", ctx.settings.database_url)
    runner = CliRunner()
    args = ["rescore", "--task", TASK, "--panel", "pelican-bicycle-default@1"]
    res = runner.invoke(cli_app, [*args, "--data-dir", str(data_dir), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["appended"] == 3 and out["rerendered"] == []
    compare = ["--compare", f"previous:{out['batch_id']}", out["batch_id"]]
    cmp = runner.invoke(cli_app, ["rescore", *compare, "--data-dir", str(data_dir)])
    assert cmp.exit_code == 0, cmp.output
    assert "3 runs compared" in cmp.output and "outcome: 0/3 moved" in cmp.output
    assert runner.invoke(cli_app, ["rescore", "--data-dir", str(data_dir)]).exit_code == 2
