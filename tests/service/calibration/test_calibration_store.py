"""Acceptance: calibrating geometry@1 on the bundled set through the real sandboxed pipeline
stores the run and its gate decisions (every metric with its interval, retrievable over HTTP),
and the demo's structured samples then get decided verdicts instead of ``no_reliable_judge``
from the service's own evaluator (which reads the stored gate).

The calibration is the session's (``geometry_calibrated``: ``regua calibrate`` on the bundled
set, its renders kept in its data folder), not one more render of the whole set."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

import judges
from judges.calibration import CalibrationRun
from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.calibration.calibrate import CalibrationRequest, calibrate, store_run
from service.calibration.verdicts import KIND
from service.context import ServiceContext
from service.evaluation.gate import gate_table
from service.pipeline.render_client import RenderClient
from service.server import create_app
from service.storage import Artifact, CriterionOutcomeRow, Database, Run
from service.storage.blob_registry import open_blob_store
from tests.helpers.httpclient import Http
from tests.helpers.runs import GEOMETRY_CRITERIA, real_runs
from tests.helpers.server import serve_in_thread
from tests.service.conftest import Calibrated

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.timeout(900)]
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "outputs"
REQUEST = CalibrationRequest("geometry@1", "bundled")
"""What ``geometry_calibrated`` asked of ``regua calibrate`` (its defaults: held-out split, 2
repeats, seed 0, 1,000 bootstrap resamples)."""
STRUCTURED = ("structured-good.svg", "structured-good-2.svg", "fail-R2-foot-off-pedal.svg")
RATES = ("accuracy", "macro_f1", "kappa", "missed_critical", "false_reject", "uncertain_rate")


def _outputs() -> dict[str, str]:
    return {name: (SAMPLES / name).read_text() for name in STRUCTURED}


def _criteria(ctx: ServiceContext, run_id: str) -> dict[str, CriterionOutcomeRow]:
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        rows = s.scalars(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == run.current_evaluation_id
            )
        ).all()
        return {r.criterion: r for r in rows}


@pytest.fixture(scope="module")
def service(
    render_pool: WorkerPool, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceContext]:
    """A service context on the session's render pool; its evaluator reads the stored gate."""
    data = tmp_path_factory.mktemp("calib") / "data"
    settings = Settings(data_dir=data, database_url=None, queue_capacity=100, render_workers=2)
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    ctx.gate.ttl_s = 0.0
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def geometry_run(geometry_calibrated: Calibrated) -> CalibrationRun:
    """geometry@1 on the bundled set's held-out split, as ``regua calibrate`` measured it (the
    renders are kept in its data folder)."""
    return CalibrationRun.from_dict(json.loads(geometry_calibrated.run_file.read_text()))


def test_recalibration_rejudges_stored_renders(
    geometry_calibrated: Calibrated, geometry_run: CalibrationRun, tmp_path: Path
) -> None:
    """A second calibration through a render client that cannot start a sandbox gives the same
    verdicts: it reads the kept renders and renders nothing."""
    data = tmp_path / "data"
    shutil.copytree(geometry_calibrated.data_dir, data)
    settings = Settings(data_dir=data, database_url=None, artifact_dir=None, render_workers=2)
    db = Database(settings.resolved_database_url())
    blobs = open_blob_store(settings)
    broken = RenderClient(settings.model_copy(update={"chromium_path": tmp_path / "x"}))
    try:
        with db.read() as s:
            kept = s.scalar(select(func.count(Artifact.id)).where(Artifact.kind == KIND))
        assert kept and kept >= 40  # every held-out drawing (and the bases) kept once
        again = calibrate(REQUEST, settings, broken, db=db, blobs=blobs)
    finally:
        broken.close()
        db.dispose()
    assert again.results == geometry_run.results  # same verdicts from the stored frames and masks
    assert [d.passed for d in again.decisions] == [d.passed for d in geometry_run.decisions]


def test_calibration_is_stored_and_the_demo_samples_get_decided_verdicts(
    service: ServiceContext, geometry_run: CalibrationRun
) -> None:
    ctx = service
    before = real_runs(ctx, ctx.machinery, _outputs())
    for name, run_id in before.items():
        crit = _criteria(ctx, run_id)
        for cid in GEOMETRY_CRITERIA:
            assert crit[cid].review_reason == judges.NO_RELIABLE_JUDGE, (name, cid)

    store_run(geometry_run, ctx.db)
    with ctx.db.read() as s:
        table = gate_table(s)
    geometry = judges.get_profile("geometry@1")
    granted = {c for (p, c, _f), d in table.latest.items() if d.passed and p == "geometry@1"}
    assert granted == set(GEOMETRY_CRITERIA)
    assert all(table(geometry, c, "pelican-bicycle") for c in GEOMETRY_CRITERIA)
    after = real_runs(ctx, ctx.machinery, _outputs())
    for name, run_id in after.items():
        crit = _criteria(ctx, run_id)
        for cid in GEOMETRY_CRITERIA:
            assert crit[cid].status in ("pass", "fail"), (name, cid, crit[cid].status)
            assert crit[cid].review_reason != judges.NO_RELIABLE_JUDGE
    assert _criteria(ctx, after["structured-good.svg"])["R2"].status == "pass"
    assert _criteria(ctx, after["fail-R2-foot-off-pedal.svg"])["R2"].status == "fail"

    # every metric and its interval is retrievable over HTTP
    token, _ = create_token(ctx.db, "admin", "t")
    headers = {"Authorization": f"Bearer {token}"}
    with (
        serve_in_thread(create_app(ctx)) as url,
        Http(base_url=url, headers=headers, timeout=120) as http,
    ):
        got = http.get(f"/v1/calibrations/{geometry_run.run_id}")
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["run"] == geometry_run.to_dict()
        assert CalibrationRun.from_dict(body["run"]) == geometry_run
        assert {d["criterion"] for d in body["decisions"]} == set(GEOMETRY_CRITERIA)
        for d in body["decisions"]:
            assert d["passed"] and d["thresholds"]["min_macro_f1"] == 0.5
            for rate in RATES:
                est = d["metrics"][rate]
                assert est["value"] is not None and est["ci_low"] <= est["ci_high"], rate
            assert "human_agreement" in d["metrics"]
        gate = http.get("/v1/gate").json()["decisions"]
        assert {(d["profile_id"], d["criterion"]) for d in gate if d["passed"]} == {
            ("geometry@1", c) for c in GEOMETRY_CRITERIA
        }
