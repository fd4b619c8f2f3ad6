"""Calibrating the real geometry judge on the bundled set, through the sandboxed renderer.

The run is the session's ``regua calibrate --judge geometry@1 --set bundled`` (the README's
step): it renders the held-out drawings once each and judges every held-out item twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judges
from judges.calibration.gate import eligibility_table
from judges.calibration.runner import CalibrationRun
from regua.settings import Settings
from sandbox import WorkerPool
from service.pipeline.local import evidence_of
from service.pipeline.render_client import RenderClient
from tasks import bundled_registry
from tests.service.conftest import Calibrated

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
GEOMETRY_CRITERIA = {"B1", "B2", "R1", "R2", "R3"}


def _run(calibrated: Calibrated) -> CalibrationRun:
    return CalibrationRun.from_dict(json.loads(calibrated.run_file.read_text()))


def test_geometry_judge_earns_its_vote(geometry_calibrated: Calibrated) -> None:
    run = _run(geometry_calibrated)
    assert {d.criterion for d in run.decisions} == GEOMETRY_CRITERIA  # P1 is not its question
    assert run.abstained and all(a.endswith(":P1") for a in run.abstained)
    for d in run.decisions:
        assert d.passed, (d.criterion, d.reasons)
        assert d.thresholds["min_macro_f1"] == 0.5 and d.split_seed == 2026
    for criterion, m in run.per_criterion.items():
        assert m.n_judge_errors == 0, criterion
        assert m.invariance_violation.value == 0.0, criterion  # must-not-change pairs hold
        assert m.sensitivity.value == 1.0, criterion  # must-change pairs moved
        assert m.repeat_agreement.value == 1.0, criterion
        assert m.missed_critical.value == 0.0, criterion
        for name in ("accuracy", "macro_f1", "missed_critical", "false_reject", "uncertain_rate"):
            est = getattr(m, name)
            assert est.value is not None and est.ci_low is not None and est.ci_high is not None
    stored = json.loads(json.dumps(run.to_dict()))
    assert CalibrationRun.from_dict(stored) == run


def test_gate_decisions_make_the_structured_sample_decided(
    geometry_calibrated: Calibrated, render_pool: WorkerPool, samples_dir: Path
) -> None:
    run = _run(geometry_calibrated)
    task = bundled_registry().get("pelican-bicycle-structured@1")
    svg = (samples_dir / "outputs" / "structured-good.svg").read_text()
    evidence = evidence_of(svg, task, RenderClient(Settings(), render_pool))
    panel = judges.panel_for_family(task.family)
    before = judges.evaluate(evidence.inp, panel, None)
    after = judges.evaluate(evidence.inp, panel, eligibility_table(run.decisions))
    for cid in GEOMETRY_CRITERIA:
        assert before.criterion(cid).review_reason == judges.NO_RELIABLE_JUDGE
        assert after.criterion(cid).status == "pass", after.criterion(cid)
