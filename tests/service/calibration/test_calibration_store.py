"""Acceptance: calibrating geometry@1 on the bundled set through the real sandboxed pipeline
stores the run and its gate decisions (every metric with its interval, retrievable over HTTP),
and the demo's structured samples then get decided verdicts instead of ``no_reliable_judge``
from the service's own evaluator (which reads the stored gate)."""

from __future__ import annotations

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
from service.storage import Artifact, CriterionOutcomeRow, Run
from tests.helpers.httpclient import Http
from tests.helpers.runs import GEOMETRY_CRITERIA, real_runs
from tests.helpers.server import serve_in_thread

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.timeout(900)]
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "outputs"
REQUEST = CalibrationRequest("geometry@1", "bundled", repeats=2, n_boot=500)
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
def geometry_run(service: ServiceContext) -> CalibrationRun:
    """geometry@1 on the bundled set's held-out split; the renders are kept in the service's
    artifact store."""
    return calibrate(
        REQUEST, service.settings, service.renderer, db=service.db, blobs=service.blobs
    )


def test_recalibration_rejudges_stored_renders(
    service: ServiceContext, geometry_run: CalibrationRun, tmp_path: Path
) -> None:
    """A second calibration through a render client that cannot start a sandbox gives the same
    verdicts: it reads the kept renders and renders nothing."""
    with service.db.read() as s:
        kept = s.scalar(select(func.count(Artifact.id)).where(Artifact.kind == KIND))
    assert kept and kept >= 40  # every held-out drawing (and the bases) kept once
    broken = RenderClient(service.settings.model_copy(update={"chromium_path": tmp_path / "x"}))
    try:
        again = calibrate(REQUEST, service.settings, broken, db=service.db, blobs=service.blobs)
    finally:
        broken.close()
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
