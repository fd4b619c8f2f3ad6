"""``regua calibrate --panel``: the adjudicated panel as a whole, each judge alone, adjudication.

The real command (sandboxed render of a label folder, the static checks, ``judges.evaluate`` with
the stored gate) on two drawings labelled on R1: the good pelican (pass) and the same without
its pelican (fail). The panel's judges are fake models behind one server: ``strict`` always
fails, ``lenient`` and ``lenient-b`` always pass, so a ``pass`` majority meets a ``fail`` dissent
on every drawing and the adjudicator (always ``pass``) is asked: it agrees with the majority
twice and with the label once, and the panel as a whole misses the critical error the label
records.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judges
from judges.calibration import GateDecision
from judges.calibration.panel_agreement import PanelItem, majority, panel_agreement
from judges.judge_files import register_files
from regua.llm.testing import ByModel, FrameTruth, serving
from regua.settings import Settings
from service.cli import app
from service.evaluation.gate import store_decisions
from service.storage import Database
from tests.helpers.server import require_real_rendering

ROOT = Path(__file__).resolve().parents[3]
GOOD = (ROOT / "samples/outputs/structured-good.svg").read_text()
TASK = "pelican-bicycle-structured@2"


def test_majority_and_agreement_counts() -> None:
    assert majority(["pass", "pass", "fail"]) == "pass"
    assert majority(["pass", "fail"]) is None and majority([]) is None
    items = [
        PanelItem(
            "a:R1",
            "R1",
            True,
            "pass",
            "pass",
            {"s@1": "fail"},
            ("fail", "pass", "pass"),
            "pass",
            True,
        ),
        PanelItem(
            "b:R1",
            "R1",
            True,
            "fail",
            "pass",
            {"s@1": "fail"},
            ("fail", "uncertain", "pass"),
            "pass",
            True,
        ),
        PanelItem("c:R1", "R1", True, "fail", "fail", {"s@1": "fail"}, ("fail", "fail")),
    ]
    report = panel_agreement("p@1", "h" * 64, "set", items, n_boot=100)
    adj = report.adjudication
    assert (adj.asked, adj.decided, adj.no_majority) == (2, 2, 1)
    assert (adj.with_majority.numerator, adj.with_majority.denominator) == (1, 1)
    assert (adj.with_label.numerator, adj.with_label.denominator) == (1, 2)
    assert report.panel.missed_critical.numerator == 1  # b: the label fails, the panel passed
    assert report.judges["s@1"].missed_critical.numerator == 0


def _judge_file(tag: str, url: str) -> str:
    def profile(name: str) -> str:
        return (
            f"  - {{id: {tag}-{name}@1, kind: vision-llm, api: openai, model: {name}, "
            f'base_url: "{url}", params: {{max_retries: 0}}}}\n'
        )

    judges_on_r1 = f"[{tag}-strict@1, {tag}-lenient@1, {tag}-lenient-b@1]"
    return (
        "profiles:\n"
        + "".join(profile(n) for n in ("strict", "lenient", "lenient-b", "referee"))
        + f"""panels:
  - id: {tag}-panel@1
    family: pelican-bicycle
    adjudicator: {tag}-referee@1
    assignments: {{"*": [static@1], R1: {judges_on_r1}}}
"""
    )


def _trust(data: Path, profile_ids: list[str]) -> None:
    db = Database(Settings(data_dir=data).resolved_database_url())
    now = datetime.now(UTC).isoformat()
    try:
        with db.write() as s:
            store_decisions(
                s,
                [
                    GateDecision(
                        pid,
                        "R1",
                        "pelican-bicycle",
                        True,
                        ("declared",),
                        {},
                        {},
                        "test-gate",
                        "test-set",
                        None,
                        now,
                        profile_hash=judges.get_profile(pid).content_hash(),
                        status="trusted",
                    )
                    for pid in profile_ids
                ],
            )
    finally:
        db.dispose()


@pytest.mark.browser
@pytest.mark.sandbox
def test_calibrate_panel_reports_the_panel_each_judge_and_the_adjudicator(tmp_path: Path) -> None:
    require_real_rendering()
    tag = f"t{uuid.uuid4().hex[:8]}"
    folder = tmp_path / "labelled"
    folder.mkdir()
    (folder / "good.svg").write_text(GOOD)
    no_pelican = re.sub(r'<g id="pelican">.*?</g>\s*(?=</svg>)', "", GOOD, flags=re.S)
    (folder / "no-pelican.svg").write_text(no_pelican)
    (folder / "labels.csv").write_text(
        "file,criterion,status,annotator\ngood.svg,R1,pass,ann\nno-pelican.svg,R1,fail,ann\n"
    )
    models = ByModel(
        {
            "strict": FrameTruth(default="fail"),
            "lenient": FrameTruth(default="pass"),
            "lenient-b": FrameTruth(default="pass"),
            "referee": FrameTruth(default="pass"),
        }
    )
    data = tmp_path / "data"
    with serving(models) as server:
        register_files([judges.parse_judge_text(_judge_file(tag, server.url), "panel.yaml")])
        _trust(data, [f"{tag}-{n}@1" for n in ("strict", "lenient", "lenient-b", "referee")])
        out = tmp_path / "panel.json"
        args = ["calibrate", "--panel", f"{tag}-panel@1", "--set", str(folder), "--task", TASK]
        args += ["--split", "all", "--data-dir", str(data), "--out", str(out), "--n-boot", "200"]
        result = CliRunner().invoke(app, args, env={"REGUA_RENDER_WORKERS": "1", "COLUMNS": "200"})
        assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["items"] == 2
    adj = report["adjudication"]
    assert (adj["asked"], adj["decided"], adj["no_majority"]) == (2, 2, 0)
    assert (adj["with_majority"]["numerator"], adj["with_majority"]["denominator"]) == (2, 2)
    assert (adj["with_label"]["numerator"], adj["with_label"]["denominator"]) == (1, 2)
    assert report["panel"]["missed_critical"]["numerator"] == 1
    strict = report["judges"][f"{tag}-strict@1"]
    assert strict["missed_critical"]["numerator"] == 0 and strict["false_reject"]["numerator"] == 1
    assert "agreed with the judges' majority 1.000" in result.output
    assert "agreed with the label 0.500" in result.output
    assert f"{tag}-lenient-b@1: macro-F1" in result.output
    referee = [r for r in server.requests if r.json.get("model") == "referee"]
    assert len(referee) == 2  # asked once per drawing, on the disputed criterion only


def test_calibrate_needs_exactly_one_of_judge_and_panel() -> None:
    result = CliRunner().invoke(app, ["calibrate", "--set", "bundled"])
    assert result.exit_code == 2 and "give --judge PROFILE or --panel PANEL" in result.output
