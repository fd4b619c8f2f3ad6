"""Issue 22 point 6: ``pelican-bicycle-static@1`` is retired from the ``core`` pool by regua.

Its runs stay readable and reportable; every listing (``regua tasks list``, ``GET /v1/tasks``)
and report says it is retired and why; the README tour and the sample experiment use the tasks
whose prompts state what they score.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from service.cli import app
from service.experiments.spec import ExperimentFile
from service.reports.db import generate_report
from service.reports.html import render_html
from tasks import bundled_registry
from tasks.retirements import BUNDLED_RETIREMENTS
from tests.helpers.report_sample import seed_database
from tests.helpers.reports import runs
from tests.service.conftest import Api

ROOT = Path(__file__).resolve().parents[2]
RETIRED = "pelican-bicycle-static@1"


def test_regua_retires_the_static_task_and_says_why() -> None:
    assert set(BUNDLED_RETIREMENTS) == {RETIRED}
    assert "pelican-bicycle-restricted@1" in BUNDLED_RETIREMENTS[RETIRED]
    assert bundled_registry().get(RETIRED).pool.value == "core"  # the spec stays as frozen
    listed = CliRunner().invoke(app, ["tasks", "list", "--json"], env={"REGUA_DATA_DIR": "/nope"})
    assert listed.exit_code == 0, listed.output
    lines = {d["ref"]: d for d in map(json.loads, listed.output.splitlines())}
    assert lines[RETIRED]["state"] == "retired"
    assert lines[RETIRED]["retired_note"] == BUNDLED_RETIREMENTS[RETIRED]
    active = {ref for ref, d in lines.items() if d["state"] == "active"}
    assert {"pelican-bicycle-open@1", "pelican-bicycle-restricted@1"} <= active


def test_the_tour_and_the_sample_experiment_use_active_tasks() -> None:
    readme = (ROOT / "README.md").read_text()
    tour = readme.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    assert RETIRED not in tour
    assert "--task pelican-bicycle-restricted@1" in tour
    doc = yaml.safe_load((ROOT / "samples/experiments/pelican-mock.yaml").read_text())
    sample = ExperimentFile.model_validate(doc)
    assert sample.items == ["pelican-bicycle-open@1", "pelican-bicycle-restricted@1"]
    for item in sample.items:
        assert item not in BUNDLED_RETIREMENTS


def test_runs_of_the_retired_task_stay_readable_and_the_report_says_so(api: Api) -> None:
    seed_database(
        api.ctx.db,
        runs("m", ["pass", "fail"], task_ref=RETIRED, family="pelican-bicycle")
        + runs("m", ["pass"], task_ref="pelican-bicycle-open@1", family="pelican-bicycle"),
    )
    with api.ctx.db.read() as s:
        report, _inputs = generate_report(s, [RETIRED, "pelican-bicycle-open@1"])
    by_ref = {tv["task_ref"]: tv for tv in report["task_versions"]}
    assert by_ref[RETIRED]["retired"] == f"retired by regua: {BUNDLED_RETIREMENTS[RETIRED]}"
    assert by_ref["pelican-bicycle-open@1"]["retired"] is None
    # its runs are still counted
    assert sum(g["counts"]["runs"] for g in by_ref[RETIRED]["groups"]) == 2
    page = render_html(report)
    assert re.search(r"pelican-bicycle-static@1 <span class=\"tag\">[^<]*· retired</span>", page)
    assert "This task version is retired (retired by regua: its criteria score" in page
    got = api.client.get("/v1/tasks", headers=api.h("submitter")).json()["tasks"]
    line = next(t for t in got if t["ref"] == RETIRED)
    assert line["retired"] is True and line["retired_note"] == BUNDLED_RETIREMENTS[RETIRED]
    assert line["origin"] == "bundled"
    detail = api.client.get(f"/v1/tasks/{RETIRED}", headers=api.h("submitter")).json()
    assert detail["retired"] is True and detail["spec"]["id"] == "pelican-bicycle-static"


def test_an_installation_may_retire_a_task_of_its_own_with_its_reason(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"REGUA_DATA_DIR": str(data)}
    done = CliRunner().invoke(app, ["tasks", "retire", RETIRED, "--note", "ours"], env=env)
    assert done.exit_code == 0, done.output
    listed = CliRunner().invoke(app, ["tasks", "list", "--json"], env=env)
    line = next(d for d in map(json.loads, listed.output.splitlines()) if d["ref"] == RETIRED)
    assert line["retired_note"] == "ours"  # the installation's own retirement wins
