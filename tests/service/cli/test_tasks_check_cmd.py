"""Issue 16 part 5: ``regua tasks check FILE`` prints each check and exits non-zero on failure."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from service.cli import app

ROOT = Path(__file__).resolve().parents[3]
FLAMINGO = ROOT / "tests" / "fixtures" / "tasks" / "flamingo-unicycle-structured-1.yaml"
STRUCTURED_1 = ROOT / "tasks" / "specs" / "pelican-bicycle-structured-1.yaml"


def test_a_good_task_passes_every_check() -> None:
    got = CliRunner().invoke(app, ["tasks", "check", str(FLAMINGO)], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    lines = got.output.splitlines()
    assert lines[0] == "PASS spec-valid: flamingo-unicycle-structured@1 validates"
    assert lines[1].startswith("PASS criteria-stated:")
    assert lines[2].startswith("PASS perturbation-sets: one set per geometric criterion")
    assert "SKIP reference-drawing: no reference drawing given (--reference SVG)" in lines
    assert lines[-1] == "every acceptance check passes"


def test_a_task_whose_prompt_omits_criteria_fails(tmp_path: Path) -> None:
    got = CliRunner().invoke(app, ["tasks", "check", str(STRUCTURED_1)], env={"COLUMNS": "200"})
    assert got.exit_code == 1
    assert "FAIL criteria-stated: F1: only" in got.output
    assert "1 check(s) failed: fix them before the task enters a pool" in got.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: Not-An-Id\n")
    bad = CliRunner().invoke(app, ["tasks", "check", str(broken)], env={"COLUMNS": "200"})
    assert bad.exit_code == 1
    assert f"FAIL spec-valid: {broken}: invalid task spec" in bad.output
    assert "SKIP criteria-stated: the spec does not validate (see spec-valid)" in bad.output
