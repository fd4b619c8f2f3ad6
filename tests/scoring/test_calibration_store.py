"""Acceptance: calibrating geometry@1 on the bundled set through the real sandboxed pipeline
stores the run and its gate decisions (every metric with its interval, retrievable over HTTP),
and the demo's structured samples then get decided verdicts instead of ``no_reliable_judge``
from the production evaluator (``service.adapters.production_components``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

import judges
from judges.calibration import CalibrationRun
from regua.settings import Settings
from service.adapters import production_components
from service.api import create_app
from service.auth import create_token
from service.components import Components
from service.context import ServiceContext
from service.db import Artifact, CriterionOutcomeRow, Run
from service.scoring.calibrate import calibrate, store_run
from service.scoring.calibration import StoredEligibility, latest_eligibility
from service.scoring.renders import KIND
from tests.render_pool import render_pool_unavailable
from tests.scoring.factory import GEOMETRY_CRITERIA, PoolRenderer, real_runs

pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.timeout(900)]
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
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
def service(render_pool: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A service context whose evaluator is the production one (stored-gate eligibility)."""
    why = render_pool_unavailable()
    if why:
        pytest.skip(why)
    data = tmp_path_factory.mktemp("calib") / "data"
    ctx = ServiceContext.open(Settings(data_dir=data, database_url=None, queue_capacity=100))
    prod = production_components(ctx.settings)
    comps = Components(prod.checker, PoolRenderer(render_pool), prod.evaluator)
    yield ctx, comps
    ctx.close()


@pytest.fixture(scope="module")
def geometry_run(render_pool: Any, service: Any) -> CalibrationRun:
    """geometry@1 on the bundled set's held-out split (renders ~50 drawings; ~1-2 min); the
    renders are kept in the service's artifact store."""
    ctx = service[0]
    return calibrate("geometry@1", "bundled", repeats=2, n_boot=500, pool=render_pool,
                     db=ctx.db, blobs=ctx.blobs)  # fmt: skip


class _NoPool:
    """A render pool that must not be used."""

    def run(self, *_a: Any, **_k: Any) -> Any:
        raise AssertionError("re-calibration rendered a drawing")

    def close(self) -> None:
        """Nothing to close."""


def test_recalibration_rejudges_stored_renders(service: Any, geometry_run: CalibrationRun) -> None:
    ctx = service[0]
    with ctx.db.read() as s:
        kept = s.scalar(select(func.count(Artifact.id)).where(Artifact.kind == KIND))
    assert kept and kept >= 40  # every held-out drawing (and the bases) kept once
    again = calibrate("geometry@1", "bundled", repeats=2, n_boot=500, pool=_NoPool(),
                      db=ctx.db, blobs=ctx.blobs)  # fmt: skip
    assert again.results == geometry_run.results  # same verdicts from the stored frames and masks
    assert [d.passed for d in again.decisions] == [d.passed for d in geometry_run.decisions]


def test_calibration_is_stored_and_the_demo_samples_get_decided_verdicts(
    service: Any, geometry_run: CalibrationRun
) -> None:
    ctx, comps = service
    assert isinstance(comps.evaluator._eligibility, StoredEligibility)  # the wiring under test
    before = real_runs(ctx, comps, _outputs())
    for name, run_id in before.items():
        crit = _criteria(ctx, run_id)
        for cid in GEOMETRY_CRITERIA:
            assert crit[cid].review_reason == judges.NO_RELIABLE_JUDGE, (name, cid)

    store_run(geometry_run, db=ctx.db)
    with ctx.db.read() as s:
        table = latest_eligibility(s)
    assert {c for (p, c, f), ok in table.items() if ok and p == "geometry@1"} == set(
        GEOMETRY_CRITERIA
    )
    after = real_runs(ctx, comps, _outputs())
    for name, run_id in after.items():
        crit = _criteria(ctx, run_id)
        for cid in GEOMETRY_CRITERIA:
            assert crit[cid].status in ("pass", "fail"), (name, cid, crit[cid].status)
            assert crit[cid].review_reason != judges.NO_RELIABLE_JUDGE
    assert _criteria(ctx, after["structured-good.svg"])["R2"].status == "pass"
    assert _criteria(ctx, after["fail-R2-foot-off-pedal.svg"])["R2"].status == "fail"

    # every metric and its interval is retrievable over HTTP
    token, _ = create_token(ctx.db, "admin", "t")
    with TestClient(create_app(ctx)) as http:
        http.headers["Authorization"] = f"Bearer {token}"
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
