"""Acceptance: after ``regua calibrate --judge geometry@1 --set bundled``, a reply with no SVG, a
script-carrying SVG and a good structured pelican submitted over HTTP all end with a final
outcome, and the run views, the JSON report, the report page and ``regua report`` answer.

Before the evaluation path was unified, the calibrated geometry judge's failure on a reply
with no masks became a fifth criterion status that every view rejected (HTTP 500)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli import app
from tests.helpers.server import Served
from tests.service.conftest import Calibrated

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
TASK = "pelican-bicycle-structured@1"
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
STATUSES = {"pass", "fail", "uncertain", "not_applicable"}


def test_calibrated_service_decides_and_every_view_answers(
    geometry_calibrated: Calibrated, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(geometry_calibrated.data_dir, data)
    replies = {
        "no-svg": (SAMPLES / "no-svg-refusal.txt").read_text(),
        "script": (SAMPLES / "script-carrying.svg").read_text(),
        "good": "Here it is:\n" + (SAMPLES / "structured-good.svg").read_text(),
    }
    server = Served(data)
    try:
        with server.client() as client:
            ids = {k: client.submit(TASK, f"model-{k}", v) for k, v in replies.items()}
            views = client.wait(list(ids.values()), timeout_s=300)
            for key, run_id in ids.items():
                got = client.http.get(f"/v1/runs/{run_id}")
                assert got.status_code == 200, (key, got.text)
                _check_view(key, got.json())
            assert {k: views[r]["outcome"]["status"] for k, r in ids.items()} == {
                "no-svg": "fail",
                "script": "fail",
                "good": "pending",  # P1 (a recognisable pelican) has no calibrated judge
            }
            report = client.http.get("/v1/reports", params={"task": TASK})
            assert report.status_code == 200, report.text
            assert report.json()["provenance"]["runs"] == 3
            page = client.http.get("/v1/reports/html", params={"task": TASK})
            assert page.status_code == 200 and "<svg" in page.text
    finally:
        server.stop()
    out = tmp_path / "report"
    args = ["report", "--task", TASK, "--out", str(out), "--data-dir", str(data)]
    made = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert made.exit_code == 0, made.output
    assert json.loads((out / "report.json").read_text())["provenance"]["runs"] == 3


def _check_view(key: str, view: dict[str, object]) -> None:
    evaluation = view["evaluation"]
    assert isinstance(evaluation, dict)
    criteria = {c["criterion"]: c for c in evaluation["criteria"]}
    assert {c["status"] for c in criteria.values()} <= STATUSES, key
    if key == "good":  # the calibrated judge decides what it earned, people decide the rest
        assert all(criteria[c]["status"] == "pass" for c in ("F1", "B1", "B2", "R1", "R2", "R3"))
        assert criteria["P1"]["review_reason"] == "no_reliable_judge"
    if key == "no-svg":  # the calibrated judge could not answer: recorded, never a fifth status
        failures = evaluation["judge_failures"]
        assert isinstance(failures, list) and failures
        assert criteria["R2"]["status"] == "uncertain"
        assert criteria["R2"]["review_reason"] == "judge_failure"
