"""Calibrating the real geometry judge on the bundled set, through the sandboxed renderer.

Skips (with the reason) when Chromium or bubblewrap is absent. The run renders the held-out
drawings once each (~50 renders) and judges every held-out item twice.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from judges.calibration.bundled import load_bundled_set
from judges.calibration.gate import eligibility_table
from judges.calibration.runner import CalibrationRun, run_calibration
from service.cli.calibrate_cmd import PipelineVerdicts

pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.timeout(900)]
GEOMETRY_CRITERIA = {"B1", "B2", "R1", "R2", "R3"}


@pytest.fixture(scope="module")
def geometry_run(render_pool: Any) -> tuple[CalibrationRun, PipelineVerdicts]:
    bundle = load_bundled_set()
    s = bundle.calibration_set
    from tasks import bundled_registry

    task = bundled_registry().get(s.task_ref)
    verdicts = PipelineVerdicts(
        task, "geometry@1", lambda i: bundle.artifacts[i.artifact_sha256], pool=render_pool
    )
    run = run_calibration("geometry", "geometry@1", s, verdicts, repeats=2, n_boot=500)
    return run, verdicts


def test_geometry_judge_earns_its_vote(
    geometry_run: tuple[CalibrationRun, PipelineVerdicts],
) -> None:
    run, _ = geometry_run
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
    geometry_run: tuple[CalibrationRun, PipelineVerdicts], samples_dir: Any
) -> None:
    import checks
    import judges

    run, verdicts = geometry_run
    task = verdicts.task
    svg = (samples_dir / "outputs" / "structured-good.svg").read_text()
    frames, masks, render_doc = _render(verdicts, svg)
    report = checks.check_reply(svg, task).to_dict()
    panel = judges.panel_for_family(task.family)
    before = judges.evaluate(task, frames, masks, report, render_doc, panel, None)
    after = judges.evaluate(
        task, frames, masks, report, render_doc, panel, eligibility_table(run.decisions)
    )
    for cid in GEOMETRY_CRITERIA:
        assert before.criterion(cid).review_reason == judges.NO_RELIABLE_JUDGE
        assert after.criterion(cid).status == "pass", after.criterion(cid)


def _render(verdicts: PipelineVerdicts, svg: str) -> tuple[Any, Any, Any]:
    from judges.calibration.perturb import sha256_hex
    from judges.calibration.sets import CalibrationItem

    item = CalibrationItem("sample:R2", sha256_hex(svg.encode()), "R2", verdicts.task.ref)
    rendered = verdicts.render(item)
    assert not isinstance(rendered, str), rendered
    return rendered
