"""``regua tasks check FILE`` prints each check and exits non-zero on failure (issues 16.5, 22.6).

The bundled tasks that state what they score pass; a task file whose prompt omits a necessary
condition fails, naming the criterion.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli import app
from tests.helpers import otter

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
    assert "FAIL criteria-stated: P1: only 1 of 4 key terms" in got.output
    assert "; B2: only" in got.output and "; R2: only" in got.output
    assert "1 check(s) failed: fix them before the task enters a pool" in got.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: Not-An-Id\n")
    bad = CliRunner().invoke(app, ["tasks", "check", str(broken)], env={"COLUMNS": "200"})
    assert bad.exit_code == 1
    assert f"FAIL spec-valid: {broken}: invalid task spec" in bad.output
    assert "SKIP criteria-stated: the spec does not validate (see spec-valid)" in bad.output


@pytest.mark.parametrize("name", ["open-1", "restricted-1", "structured-2", "animated-2"])
def test_the_honest_bundled_tasks_pass(name: str) -> None:
    path = ROOT / "tasks" / "specs" / f"pelican-bicycle-{name}.yaml"
    got = CliRunner().invoke(app, ["tasks", "check", str(path)], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    assert "PASS criteria-stated: every applicable necessary criterion is stated" in got.output
    assert "Q1 optional: descriptive, need not be asked for" in got.output
    assert got.output.splitlines()[-1] == "every acceptance check passes"


def test_a_new_family_passes_and_fails_once_its_prompt_omits_a_condition(tmp_path: Path) -> None:
    good = otter.write_task(tmp_path / "otter.yaml")
    got = CliRunner().invoke(app, ["tasks", "check", str(good)], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    omitted = otter.PROMPT.replace(
        "- the otter sitting inside the kayak (not beside it, not floating above it).\n", ""
    )
    assert omitted != otter.PROMPT
    bad = otter.write_task(tmp_path / "otter-omits.yaml", omitted)
    got = CliRunner().invoke(app, ["tasks", "check", str(bad)], env={"COLUMNS": "200"})
    assert got.exit_code == 1
    assert "FAIL criteria-stated: R1: only 2 of 4 key terms in the prompt" in got.output
    assert "(absent: sitting, inside)" in got.output
    assert "O1" not in got.output.split("FAIL criteria-stated:")[1].split("\n")[0]
