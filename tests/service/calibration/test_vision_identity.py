"""One judge identity from calibration to vote: a vision judge whose model comes only from
``REGUA_JUDGE_MODEL`` is calibrated, gated and voting under the same id and content hash.

The model is a real local HTTP server speaking the OpenAI API that answers from the bundled
set's labels (it knows each rendered frame by its sha256), configured only through
``REGUA_JUDGE_BASE_URL`` / ``REGUA_JUDGE_MODEL``.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

import judges
from judges.calibration import load_bundled_set
from regua.llm.testing import FrameTruth, serving
from regua.settings import Settings
from sandbox import WorkerPool
from service.calibration.verdicts import KIND
from service.cli import app
from service.context import ServiceContext
from service.evaluation.gate import gate_table
from service.pipeline.local import evidence_of
from service.pipeline.submit import Submission
from service.reports.runs import run_view
from service.storage import Artifact, CalibrationRunRow, CriterionOutcomeRow, Database, Run
from tests.service.conftest import Calibrated, drain

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
MODEL = "truthful-test"
EFFECTIVE = f"vision-llm-openai+{MODEL}@1"
PANEL = "pelican-bicycle-llm@1"
TASK = "pelican-bicycle-structured@1"


def _truth(data: Path) -> dict[str, dict[str, str]]:
    """frame sha256 → criterion → the label of the bundled set, for every kept render."""
    bundle = load_bundled_set()
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    frames: dict[str, list[str]] = {}
    with db.read() as s:
        for name, sha in s.execute(
            select(Artifact.name, Artifact.sha256).where(Artifact.kind == KIND)
        ).all():
            log = json.loads((data / "artifacts" / sha[:2] / sha[2:4] / sha).read_bytes())
            frames[name.split("|")[0]] = [f["sha256"] for f in log["frames"]]
    db.dispose()
    truth: dict[str, dict[str, str]] = defaultdict(dict)
    for item in bundle.calibration_set.items:
        for frame in frames.get(item.artifact_sha256, []):
            status = bundle.calibration_set.reference(item.item_id).status
            if status is not None:  # a disputed item has no reference to answer with
                truth[frame][item.criterion] = status

    return truth


def test_settings_model_is_calibrated_and_votes_under_one_id(
    geometry_calibrated: Calibrated, render_pool: WorkerPool, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(geometry_calibrated.data_dir, data)  # the kept renders are reused
    truth = _truth(data)
    with serving(FrameTruth({k: dict(v) for k, v in truth.items()})) as model:
        env = {"REGUA_JUDGE_BASE_URL": model.url + "/v1", "REGUA_JUDGE_MODEL": MODEL}
        args = ["calibrate", "--judge", "vision-llm-openai@1", "--data-dir", str(data)]
        result = CliRunner().invoke(app, args, env={**env, "COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        settings = Settings(
            data_dir=data,
            judge_base_url=model.url + "/v1",
            judge_model=MODEL,
            render_workers=2,
            panel=PANEL,  # REGUA_PANEL: the service seats the vision judge on every run
        )
        effective = judges.create_judge("vision-llm-openai@1", settings).profile
        assert effective.id == EFFECTIVE
        # the full id and its hash are printed, and recorded on the stored calibration run
        assert f"judge {EFFECTIVE} hash {effective.content_hash()}" in result.output
        _calibration_run_records_the_identity(data, effective)
        ctx = ServiceContext.open(settings, render_pool=render_pool)
        try:
            _gate_holds_the_effective_identity(ctx, effective)
            _its_vote_counts(ctx, model.model.truth, effective)
        finally:
            ctx.close()


def _gate_holds_the_effective_identity(ctx: ServiceContext, effective: judges.JudgeProfile) -> None:
    with ctx.db.read() as s:
        table = gate_table(s)
    mine = {k: d for k, d in table.latest.items() if k[0] == EFFECTIVE}
    assert mine, "the gate has no decision under the id the judge votes with"
    assert all(d.profile_hash == effective.content_hash() for d in mine.values())
    assert not any(k[0] == "vision-llm-openai@1" for k in table.latest)  # never the bare id
    assert any(table(effective, c, f) for (_p, c, f) in mine)  # it earned a vote somewhere


def _its_vote_counts(
    ctx: ServiceContext, truth: dict[str, dict[str, str]], effective: judges.JudgeProfile
) -> None:
    """A good structured pelican judged with the vision panel: the model says pass on every
    criterion, and where the gate let it vote, its vote is counted under the effective id."""
    svg = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
    task = ctx.registry.get(TASK)
    rendered = evidence_of(svg, task, ctx.renderer)
    for frame in rendered.inp.frames:
        truth[frame.artifact_ref] = {c.id: "pass" for c in task.criteria}
    assert ctx.evaluator.panel_for(task).id == PANEL
    (run_id,) = ctx.submit([Submission(TASK, "m", svg)], None)
    drain(ctx)
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        rows = s.scalars(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == run.current_evaluation_id
            )
        ).all()
        table = gate_table(s)
    counted = {
        r.criterion
        for r in rows
        for v in r.votes or []
        if v["judge_profile_id"] == EFFECTIVE and v["eligible"]
    }
    expected = {
        c.id
        for c in task.criteria
        if c.applicable and c.id != "F1" and table(effective, c.id, task.family)
    }
    assert expected and counted == expected
    _the_run_view_shows_each_vote_and_its_gate_decision(ctx, run_id, effective, expected)


def _calibration_run_records_the_identity(data: Path, effective: judges.JudgeProfile) -> None:
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            rows = s.execute(
                select(CalibrationRunRow.profile_id, CalibrationRunRow.profile_hash)
            ).all()
    finally:
        db.dispose()
    assert (EFFECTIVE, effective.content_hash()) in rows
    assert not any(pid == "vision-llm-openai@1" for pid, _ in rows)


def _the_run_view_shows_each_vote_and_its_gate_decision(
    ctx: ServiceContext, run_id: str, effective: judges.JudgeProfile, voted: set[str]
) -> None:
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        view = run_view(s, run, include_model=False).model_dump(mode="json")
    shown: set[str] = set()
    for c in view["evaluation"]["criteria"]:
        for vote in c["votes"]:
            if vote["judge_profile_id"] != EFFECTIVE:
                continue
            assert vote["profile_hash"] == effective.content_hash()
            assert vote["kind"] == "vision-llm"
            gate = vote["gate"]
            if gate is None:  # a criterion the calibration set has no labels for
                assert vote["eligible"] is False and c["criterion"] not in voted
                assert vote["basis"].startswith("never calibrated")
                continue
            shown.add(c["criterion"])
            assert gate["profile_hash"] == effective.content_hash()
            assert vote["eligible"] is (c["criterion"] in voted) is gate["passed"]
            assert vote["basis"] == (
                "the gate passed its calibration"
                if gate["passed"]
                else "the gate rejected its calibration: no vote"
            )
            assert gate["calibration_run_id"]
    assert voted <= shown
