"""``regua judge`` (CLI) and its engine ``run_judge`` (through the real sandboxed renderer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from regua.settings import Settings
from service.cli import app
from service.cli.judge_cmd import run_judge
from tasks import bundled_registry
from tests.helpers import perturb as pt

RUNNER = CliRunner()
TASK = bundled_registry().get("pelican-bicycle-structured@1")


def test_list_shows_profiles_and_panels() -> None:
    result = RUNNER.invoke(app, ["judge", "--list"])
    assert result.exit_code == 0, result.output
    for name in ("static@1", "geometry@1", "vision-llm-openai@1", "vision-llm-anthropic@1"):
        assert name in result.output
    assert "pelican-bicycle-default@1" in result.output


def test_static_profile_json_without_render(tmp_path: Path) -> None:
    bad = tmp_path / "reply.txt"
    bad.write_text(
        "Here you go:\n```svg\n" + pt.sample_text().replace("</svg>", "<script/></svg>") + "```"
    )
    args = ["judge", str(bad), "--task", TASK.ref, "--profile", "static@1", "--no-render", "--json"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    [verdict] = doc["verdicts"]
    assert (verdict["criterion"], verdict["status"]) == ("F1", "fail")
    assert set(verdict["evidence"]) == {"artifact_ref", "time_s", "description"}
    assert verdict["judge_profile_id"] == "static@1"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    svg = tmp_path / "a.svg"
    svg.write_text(pt.sample_text())
    assert (
        RUNNER.invoke(
            app, ["judge", str(svg), "--task", TASK.ref, "--profile", "nope@1", "--no-render"]
        ).exit_code
        == 2
    )
    assert (
        RUNNER.invoke(
            app, ["judge", str(svg), "--task", "nope@1", "--profile", "static@1"]
        ).exit_code
        == 2
    )
    assert RUNNER.invoke(app, ["judge", str(svg)]).exit_code == 2


def test_geometry_without_masks_is_a_judge_error_exit_1(tmp_path: Path) -> None:
    svg = tmp_path / "a.svg"
    svg.write_text(pt.sample_text())
    result = RUNNER.invoke(
        app, ["judge", str(svg), "--task", TASK.ref, "--profile", "geometry@1", "--no-render"]
    )
    assert result.exit_code == 1
    assert "no_masks" in result.output


@pytest.mark.browser
@pytest.mark.sandbox
def test_run_judge_through_the_sandboxed_renderer(render_pool: Any) -> None:
    settings = Settings()
    raw = pt.build(pt.move_up("foot-left", 0.10))
    verdicts, failures, notes = run_judge(raw, TASK, "geometry@1", settings, pool=render_pool)
    assert failures == [] and any("rendered 1 frame(s), 30 mask(s)" in n for n in notes)
    by = {v.criterion: v for v in verdicts}
    assert by["R2"].status.value == "fail"
    assert 0.09 <= by["R2"].details["gap_ratio"]["left"] <= 0.11
    assert {by[c].status.value for c in ("B1", "B2", "R1", "R3")} == {"pass"}
    verdicts, failures, _ = run_judge(
        pt.sample_text(), TASK, "static@1", settings, pool=render_pool
    )
    assert [(v.criterion, v.status.value) for v in verdicts] == [("F1", "pass")]
