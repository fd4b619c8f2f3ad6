"""``regua perturb`` and ``regua calibrate`` through the Typer app."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from judges.calibration.runner import CalibrationRun
from judges.perturbation.generate import sha256_hex
from regua.settings import Settings
from service.cli import app
from tests.service.conftest import Calibrated

runner = CliRunner()


def test_perturb_writes_variants_and_manifest(samples_dir: Path, tmp_path: Path) -> None:
    base = samples_dir / "outputs" / "structured-good.svg"
    args = ["perturb", str(base), "--task", "pelican-bicycle-structured@1", "--out", str(tmp_path)]
    result = runner.invoke(app, [*args, "--seed", "4"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert len(lines) == 22
    for line in lines:
        data = (tmp_path / line["file"]).read_bytes()
        assert sha256_hex(data) == line["output_sha256"]
        assert line["seed"] == 4 and line["base"]["name"] == "structured-good"
    one = runner.invoke(
        app, [*args, "-p", "lift-body", "--params", '{"fraction": 0.3}', "--seed", "4"]
    )
    assert one.exit_code == 0, one.output
    assert "1 variants" in one.output
    bad = runner.invoke(app, [*args, "-p", "lift-body", "--params", '{"nope": 1}'])
    assert bad.exit_code == 2 and "unknown parameters" in bad.output


def test_perturb_list() -> None:
    result = runner.invoke(app, ["perturb", "--list"])
    assert result.exit_code == 0
    assert "foot-off-pedal@1\tmust_change" in result.output
    assert "mirror@1\tmust_not_change" in result.output


def test_calibrate_stores_the_run_and_its_decisions(geometry_calibrated: Calibrated) -> None:
    """``regua calibrate --judge geometry@1 --set bundled --data-dir D --out F``: the summary is
    printed (never accuracy alone), the run is written and stored with one gate decision per
    criterion, each under the judge's id and content hash, and the jury reads them."""
    import judges
    from service.evaluation.gate import gate_table, stored_decisions
    from service.storage import CalibrationRunRow, Database

    out = geometry_calibrated.output
    assert "stored calibration run" in out and "macro-F1" in out and "missed critical" in out
    assert "gate R2:" in out and "accuracy" in out
    run = CalibrationRun.from_dict(json.loads(geometry_calibrated.run_file.read_text()))
    last = out.strip().splitlines()[-1]  # where it was stored, and since when it votes
    db_file = (geometry_calibrated.data_dir / "regua.sqlite3").resolve()
    assert last.startswith(f"stored calibration run {run.run_id} ") and f" in {db_file}: " in last
    trusted = [d.criterion for d in run.decisions if d.status == "trusted"]
    votes = (
        f"votes on {', '.join(trusted)} of family pelican-bicycle since "
        if trusted
        else ("votes on no criterion of family pelican-bicycle")
    )
    assert f"geometry@1 {votes}" in last
    profile = judges.get_profile("geometry@1")
    assert run.profile_id == "geometry@1" and run.profile_hash == profile.content_hash()
    db = Database(f"sqlite:///{geometry_calibrated.data_dir / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            (row,) = s.scalars(select(CalibrationRunRow)).all()
            decisions = stored_decisions(s)
            table = gate_table(s)
    finally:
        db.dispose()
    assert row.id == run.run_id and row.profile_hash == profile.content_hash()
    assert {d.criterion for d in decisions} == {d.criterion for d in run.decisions}
    assert all(
        d.run_id == run.run_id and d.profile_hash == profile.content_hash() for d in decisions
    )
    for d in run.decisions:
        assert table(profile, d.criterion, run.task_family) is d.passed
        other = dataclasses.replace(
            profile, id=profile.id, params={"changed": True}, expected_hash=None
        )
        assert table(other, d.criterion, run.task_family) is False  # another content, no vote


def test_calibrate_reports_a_missing_set() -> None:
    result = runner.invoke(app, ["calibrate", "--judge", "g@1", "--set", "/nonexistent.jsonl"])
    assert result.exit_code == 2
    assert "no calibration set" in result.output


def test_stored_renders_are_judged_again_without_rendering(
    geometry_calibrated: Calibrated, tmp_path: Path
) -> None:
    """Calibrating again on the same data folder re-judges the kept renders: with a render
    client that cannot even start a sandbox, every item still gets the judge's answer."""
    import judges
    from judges.calibration import load_bundled_set
    from service.calibration.verdicts import PipelineVerdicts, StoredRenders
    from service.pipeline.render_client import RenderClient
    from service.storage import Database
    from service.storage.blobs import LocalBlobStore
    from tasks import bundled_registry

    bundle = load_bundled_set()
    task = bundled_registry().get(bundle.calibration_set.task_ref)
    data = geometry_calibrated.data_dir
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    broken = RenderClient(Settings(chromium_path=tmp_path / "no-chromium", render_workers=1))
    renders = StoredRenders(db, LocalBlobStore(data / "artifacts"), task)
    judge = judges.create_judge("geometry@1")
    verdicts = PipelineVerdicts(
        task, judge, lambda i: bundle.artifacts[i.artifact_sha256], broken, renders=renders
    )
    run = CalibrationRun.from_dict(json.loads(geometry_calibrated.run_file.read_text()))
    judged = {r.item_id for r in run.results}  # the split the calibration rendered
    items = [i for i in bundle.calibration_set.items if i.criterion == "R2" and i.item_id in judged]
    items = items[:6]
    try:
        verdicts.prepare(items)
        answers = [verdicts(item, 0) for item in items]
    finally:
        broken.close()
        db.dispose()
    assert renders.hits == len({i.artifact_sha256 for i in items}) and renders.kept == 0
    assert all(isinstance(a, judges.Verdict) for a in answers)
    assert verdicts(dataclasses.replace(items[0], criterion="P1"), 0) is None  # not answered


def test_no_store_only_measures_and_says_so(tmp_path: Path) -> None:
    """``--no-store`` is the only way to measure without storing: nothing is written to the
    data folder (not even a database), and the last line says the judge gains no vote."""
    from tests.helpers import otter

    good = otter.drawings()["good-0.svg"][0]
    labels = otter.write_label_folder(tmp_path / "labels", {"a.svg": (good, {"F1": "pass"})})
    data = tmp_path / "data"
    args = ["calibrate", "--judge", "static@1", "--set", str(labels), "--split", "all"]
    args += ["--task", "pelican-bicycle-restricted@1", "--repeats", "1", "--n-boot", "100"]
    env = {"REGUA_DATA_DIR": str(data), "REGUA_RENDER_WORKERS": "1", "COLUMNS": "200"}
    result = runner.invoke(app, [*args, "--no-store"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == (
        "measured only (--no-store): nothing was stored, so static@1 gains no vote; run it "
        "without --no-store to store the decisions"
    )
    assert "gate F1:" in result.output
    assert not data.exists()
