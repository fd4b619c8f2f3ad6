"""``regua perturb`` and ``regua calibrate`` through the Typer app."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judges.calibration.perturb import sha256_hex
from judges.calibration.runner import CalibrationRun, VerdictFn
from judges.calibration.sets import CalibrationItem
from service.cli import app, calibrate_cmd
from tasks import TaskSpec

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


def test_calibrate_runs_and_writes_the_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fake_pipeline(
        task: TaskSpec, profile_id: str, artifact: Callable[[CalibrationItem], bytes]
    ) -> tuple[VerdictFn, Callable[[], None]]:
        def verdict(item: CalibrationItem, repeat: int) -> str:
            assert artifact(item).startswith(b"<svg")
            return "pass"

        return verdict, lambda: None

    monkeypatch.setattr(calibrate_cmd, "pipeline_verdict_fn", fake_pipeline)
    out = tmp_path / "run.json"
    result = runner.invoke(
        app, ["calibrate", "--judge", "geometry-lax@1", "--n-boot", "100", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "gate R2: REJECT" in result.output and "missed critical" in result.output
    assert "accuracy" in result.output and "macro-F1" in result.output
    run = CalibrationRun.from_dict(json.loads(out.read_text()))
    assert run.profile_id == "geometry-lax@1" and not any(d.passed for d in run.decisions)


def test_calibrate_reports_a_missing_set() -> None:
    result = runner.invoke(app, ["calibrate", "--judge", "g@1", "--set", "/nonexistent.jsonl"])
    assert result.exit_code == 2
    assert "no calibration set" in result.output


def test_pipeline_verdicts_judge_stored_renders_without_a_pool(
    monkeypatch: pytest.MonkeyPatch, task: TaskSpec
) -> None:
    from judges.model import JudgeFailure
    from service import rendering

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may be rendered when renders are stored")

    monkeypatch.setattr(rendering, "create_pool", no_pool)
    item = CalibrationItem("x:R2", "0" * 64, "R2", task.ref)
    verdicts = calibrate_cmd.PipelineVerdicts(
        task, "geometry@1", lambda i: b"", stored=lambda i: ((), (), {})
    )
    verdicts.prepare([item])
    result = verdicts(item, 0)
    assert isinstance(result, JudgeFailure) and result.cause == "no_masks"
    assert verdicts(CalibrationItem("x:P1", "0" * 64, "P1", task.ref), 0) is None
    verdicts.close()
