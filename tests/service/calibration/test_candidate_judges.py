"""Acceptance of issue 26.5: ``regua judges propose`` writes candidate judges of one criterion in
four wordings, calibrates each on a label folder in one command, and seats the ones the gate
trusts in a new panel version. The vision model is a real local server: it answers from the
labels (it knows each rendered frame by its sha256) unless the prompt carries the lenient
wording, to which it says ``pass`` whatever it sees — the yes-man the gate must keep out.

The drawings are the bundled set's whose renders the session's calibration kept, so nothing is
rendered again here.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select
from typer.testing import CliRunner

import judges
from judges.calibration import load_bundled_set
from judges.vision.templates import LENIENT_RULE
from regua.llm.testing import FrameTruth, YesManWhen, serving
from service.calibration.verdicts import KIND
from service.cli import app
from service.storage import Artifact, Database, GateDecisionRow
from tests.service.conftest import Calibrated

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
TASK = "pelican-bicycle-structured@1"
CRITERION = "R2"
MODEL = "wording-test"


def _kept_frames(data: Path) -> dict[str, list[str]]:
    """Drawing sha256 → the sha256 of each frame of its kept render."""
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    frames: dict[str, list[str]] = {}
    with db.read() as s:
        for name, sha in s.execute(
            select(Artifact.name, Artifact.sha256).where(Artifact.kind == KIND)
        ).all():
            log = json.loads((data / "artifacts" / sha[:2] / sha[2:4] / sha).read_bytes())
            frames[name.split("|")[0]] = [f["sha256"] for f in log["frames"]]
    db.dispose()
    return frames


def _label_folder(path: Path, frames: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """The kept drawings with a pass or fail R2 reference, one annotator; the model's truth."""
    bundle = load_bundled_set()
    cal = bundle.calibration_set
    path.mkdir()
    rows: list[dict[str, str]] = []
    truth: defaultdict[str, dict[str, str]] = defaultdict(dict)
    by_file = {d.file: d for d in bundle.drawings}
    for item in cal.items:
        status = cal.reference(item.item_id).status
        drawing = by_file.get(item.artifact_file or "")
        if item.criterion != CRITERION or status not in ("pass", "fail") or drawing is None:
            continue
        if item.artifact_sha256 not in frames:
            continue
        name = f"{drawing.drawing_id}.svg"
        (path / name).write_bytes(drawing.svg)
        rows.append({"file": name, "criterion": CRITERION, "status": status, "annotator": "ann"})
        for frame in frames[item.artifact_sha256]:
            truth[frame][CRITERION] = str(status)
    with open(path / "labels.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "criterion", "status", "annotator"])
        writer.writeheader()
        writer.writerows(rows)
    assert {r["status"] for r in rows} == {"pass", "fail"}
    return dict(truth)


def test_the_gate_keeps_the_candidates_and_not_the_yes_man(
    geometry_calibrated: Calibrated, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(geometry_calibrated.data_dir, data)  # the kept renders are reused
    labels, folder = tmp_path / "labels", tmp_path / "judges"
    truth = _label_folder(labels, _kept_frames(data))
    model = YesManWhen(LENIENT_RULE, FrameTruth(truth))
    with serving(model) as server:
        env = {
            "REGUA_JUDGE_BASE_URL": f"{server.url}/v1",
            "REGUA_JUDGE_MODEL": MODEL,
            "COLUMNS": "250",
        }
        args = ["judges", "propose", "--task", TASK, "--criterion", CRITERION, "--n", "4"]
        args += ["--labels", str(labels), "--repeats", "1", "--n-boot", "200"]
        args += ["--dir", str(folder), "--data-dir", str(data), "--prefix", "wordtest-r2"]
        done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 0, done.stdout + done.stderr
    assert model.yes > 0  # the lenient wording reached the model, and it waved things through
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if "wordtest-r2-" in line}
    assert "NOT TRUSTED" in lines["wordtest-r2-lenient@1"]
    for stance in ("strict", "balanced", "rubric"):
        line = lines[f"wordtest-r2-{stance}@1"]
        assert " TRUSTED " in line and "NOT TRUSTED" not in line, lines
    panel_line = next(line for line in done.stdout.splitlines() if line.startswith("new panel"))
    new_id = panel_line.split()[2]
    panel = judges.require_panel(new_id)
    seated = panel.profiles_for(CRITERION)
    assert {f"wordtest-r2-{s}@1" for s in ("strict", "balanced", "rubric")} <= set(seated)
    assert "wordtest-r2-lenient@1" not in seated
    assert "wordtest-r2-strict@1" not in panel.profiles_for("R1")  # only the criterion asked
    # the candidates and the panel are frozen judge files, locked in the folder
    lock = json.loads((folder / "judges.lock.json").read_text())
    assert set(lock["profiles"]) == {f"wordtest-r2-{s}@1" for s in judges.candidates.STANCES}
    assert set(lock["panels"]) == {new_id}
    files = {p.name for p in folder.glob("*.yaml")}
    assert len(files) == 2
    (candidates_file,) = [f for f in files if f.startswith("candidates-")]
    declared = yaml.safe_load((folder / candidates_file).read_text())["profiles"]
    prompts = {d["id"]: d.get("prompt_version") for d in declared}
    assert prompts["wordtest-r2-rubric@1"].startswith("criterion-json-rubric-r2-")
    # each candidate's gate decision is stored under the id it votes with
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    with db.read() as s:
        stored = {
            (r.profile_id, r.status)
            for r in s.scalars(
                select(GateDecisionRow).where(GateDecisionRow.criterion == CRITERION)
            )
        }
    db.dispose()
    assert (f"wordtest-r2-lenient+{MODEL}@1", "not_trusted") in stored
    assert (f"wordtest-r2-strict+{MODEL}@1", "trusted") in stored
