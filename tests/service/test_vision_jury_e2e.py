"""Issue 13, first acceptance line: a vision jury decides structured pelicans without a person.

A real local HTTP server imitates a vision model (OpenAI API); regua reaches it only through
``REGUA_JUDGE_BASE_URL`` / ``REGUA_JUDGE_MODEL``. ``regua calibrate --judge vision-llm-openai@1
--set DIR --split all`` (the real CLI, real sandboxed rendering) calibrates it on a generated
folder with a ``labels.csv``; ``regua serve`` (a subprocess) with ``REGUA_PANEL`` set to the
built-in vision panel then judges structured pelicans submitted over HTTP. The model that sees
truly (it answers from a truth table keyed by the sha256 of the frame PNGs it is shown) is
trusted and its pelicans pass or fail as it sees them; a model that passes everything is refused
by the gate on every criterion and no run passes.

Labels needed: the gate trusts a recall only when the lower Wilson 95 % bound reaches 0.5, which
takes 4 right answers out of 4 per class; 13 drawings give each criterion at least 4 ``pass`` and
4 ``fail`` labels (good drawings, drawings without the pelican, without the bicycle, and the
foot-off-pedal sample).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from judges.calibration.runner import CalibrationRun
from regua.llm.testing import FrameTruth, serving
from service.calibration.verdicts import KIND
from service.cli import app
from service.storage import Artifact, Database
from tests.helpers.server import Served, require_real_rendering
from tests.service.calibration.pass_all_llm import pass_everything_model

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
TASK = "pelican-bicycle-structured@2"
PANEL = "pelican-bicycle-vision@1"
VISUAL = ("P1", "B1", "B2", "R1", "R2", "R3")
GOOD_COLOURS = ("#c0392b", "#2471a3", "#1e8449", "#7d3c98")
SKIES = ("#eaf4fb", "#fdf2e9", "#eafaf1", "#f4ecf7")
ENV = {"REGUA_RENDER_WORKERS": "1", "COLUMNS": "200"}
"""One render worker renders the set: a second one costs ~2.5 CPU s to start for 13 renders."""


def _without(svg: str, start: str, end: str) -> str:
    """``svg`` with the text from ``start`` up to (not including) ``end`` removed."""
    head, rest = svg.split(start, 1)
    return head + end + rest.split(end, 1)[1]


def _drawings() -> dict[str, tuple[str, dict[str, str]]]:
    """file → (SVG text, criterion → label)."""
    good = (SAMPLES / "structured-good.svg").read_text()
    every = dict.fromkeys(VISUAL, "pass")
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for i, (colour, sky) in enumerate(zip(GOOD_COLOURS, SKIES, strict=True)):
        drawing = good.replace("#c0392b", colour).replace("#eaf4fb", sky)
        out[f"good-{i}.svg"] = (drawing, every)
        no_pelican = re.sub(r'<g id="pelican">.*?</g>\s*(?=</svg>)', "", drawing, flags=re.S)
        out[f"no-pelican-{i}.svg"] = (
            no_pelican,
            {**every, "P1": "fail", "R1": "fail", "R2": "fail", "R3": "fail"},
        )
        no_bicycle = _without(drawing, '<g id="bicycle"', '<g id="pelican">')
        out[f"no-bicycle-{i}.svg"] = (
            no_bicycle,
            {**every, "B1": "fail", "B2": "fail", "R1": "fail", "R2": "fail", "R3": "fail"},
        )
    foot = (SAMPLES / "fail-R2-foot-off-pedal.svg").read_text()
    out["foot-off-pedal.svg"] = (foot, {**every, "R2": "fail"})
    return out


def _write_folder(path: Path, drawings: Mapping[str, tuple[str, dict[str, str]]]) -> None:
    path.mkdir(parents=True)
    with open(path / "labels.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file", "criterion", "status", "annotator"])
        for name, (svg, labels) in drawings.items():
            (path / name).write_text(svg, encoding="utf-8")
            writer.writerows([name, c, s, "alice"] for c, s in labels.items())


def _calibrate(folder: Path, data: Path, url: str, model: str) -> tuple[str, CalibrationRun]:
    out = data.parent / f"calibration-{model}.json"
    args = ["calibrate", "--judge", "vision-llm-openai@1", "--set", str(folder)]
    args += ["--split", "all", "--task", TASK, "--repeats", "1"]
    args += ["--data-dir", str(data), "--out", str(out)]
    env = {**ENV, "REGUA_JUDGE_BASE_URL": url + "/v1", "REGUA_JUDGE_MODEL": model}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    return result.output, CalibrationRun.from_dict(json.loads(out.read_text()))


def _frames_by_file(data: Path, folder: Path) -> dict[str, list[str]]:
    """file → the sha256 of each frame PNG of its kept calibration render."""
    by_sha = {hashlib.sha256(p.read_bytes()).hexdigest(): p.name for p in folder.glob("*.svg")}
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    out: dict[str, list[str]] = {}
    try:
        with db.read() as s:
            rows = s.execute(
                select(Artifact.name, Artifact.sha256).where(Artifact.kind == KIND)
            ).all()
    finally:
        db.dispose()
    for name, sha in rows:
        log = json.loads((data / "artifacts" / sha[:2] / sha[2:4] / sha).read_bytes())
        out[by_sha[name.split("|")[0]]] = [f["sha256"] for f in log["frames"]]
    return out


def _serve_and_judge(data: Path, url: str, model: str) -> dict[str, dict[str, Any]]:
    """``regua serve`` on the vision panel; the good drawing and the foot-off-pedal sample."""
    env = {"REGUA_JUDGE_BASE_URL": url + "/v1", "REGUA_JUDGE_MODEL": model, "REGUA_PANEL": PANEL}
    served = Served(data, **env)
    try:
        with served.client() as client:
            ids = {
                "good": client.submit(
                    TASK, "m-good", (SAMPLES / "structured-good.svg").read_text()
                ),
                "foot": client.submit(
                    TASK, "m-foot", (SAMPLES / "fail-R2-foot-off-pedal.svg").read_text()
                ),
            }
            views = client.wait(list(ids.values()), timeout_s=240)
            return {key: client.run(run_id) for key, run_id in ids.items() if run_id in views}
    finally:
        served.stop()


def _criteria(view: Mapping[str, object]) -> dict[str, dict[str, object]]:
    evaluation = view["evaluation"]
    assert isinstance(evaluation, dict)
    return {str(c["criterion"]): c for c in evaluation["criteria"]}


def test_a_calibrated_vision_jury_decides_and_a_lax_one_is_refused(tmp_path: Path) -> None:
    require_real_rendering()
    drawings = _drawings()
    folder = tmp_path / "labelled"
    _write_folder(folder, drawings)
    data = tmp_path / "data"
    with pass_everything_model() as lax:
        # first the lax model: it renders the folder (the renders are kept in the data folder)
        output, lax_run = _calibrate(folder, data, lax.url, "lax-test")
        assert "judge vision-llm-openai+lax-test@1" in output
        assert {d.criterion: d.status for d in lax_run.decisions} == dict.fromkeys(
            VISUAL, "not_trusted"
        ), [(d.criterion, d.reasons) for d in lax_run.decisions]
        frames = _frames_by_file(data, folder)
        assert set(frames) == set(drawings)
        truth = {sha: labels for name, (_svg, labels) in drawings.items() for sha in frames[name]}
        with serving(FrameTruth({k: dict(v) for k, v in truth.items()})) as seeing:
            output, run = _calibrate(folder, data, seeing.url, "seeing-test")
            assert {d.criterion: d.status for d in run.decisions} == dict.fromkeys(
                VISUAL, "trusted"
            ), [(d.criterion, d.reasons) for d in run.decisions]
            asked_before = len(seeing.model.asked)
            views = _serve_and_judge(data, seeing.url, "seeing-test")
            served_shas = {sha for _c, shas in seeing.model.asked[asked_before:] for sha in shas}
        # the service showed the model exactly the frames the calibration rendered
        assert served_shas and served_shas <= set(frames["good-0.svg"]) | set(
            frames["foot-off-pedal.svg"]
        )
        _decided_as_the_model_sees(views)
        asked_before = len(lax.model.asked)
        lax_views = _serve_and_judge(data, lax.url, "lax-test")
        assert len(lax.model.asked) > asked_before  # it was asked, and said pass to everything
    _no_false_pass(lax_views)


def _decided_as_the_model_sees(views: Mapping[str, Mapping[str, Any]]) -> None:
    seeing = "vision-llm-openai+seeing-test@1"
    assert views["good"]["outcome"]["status"] == "pass", views["good"]["outcome"]
    assert views["foot"]["outcome"]["status"] == "fail", views["foot"]["outcome"]
    for key, failed in (("good", set()), ("foot", {"R2"})):
        criteria = _criteria(views[key])
        for c in VISUAL:
            assert criteria[c]["status"] == ("fail" if c in failed else "pass"), (key, c)
            votes = criteria[c]["votes"]
            assert isinstance(votes, list)
            counted = [v for v in votes if v["eligible"]]
            assert [v["judge_profile_id"] for v in counted] == [seeing], (key, c, votes)
            assert counted[0]["basis"] == "the gate passed its calibration"
        assert criteria["F1"]["status"] == "pass"


def _no_false_pass(views: Mapping[str, Mapping[str, Any]]) -> None:
    lax = "vision-llm-openai+lax-test@1"
    assert set(views) == {"good", "foot"}
    for key, view in views.items():
        outcome = view["outcome"]
        assert isinstance(outcome, dict)
        assert outcome["status"] == "pending", (key, outcome)
        criteria = _criteria(view)
        for c in VISUAL:
            assert criteria[c]["status"] != "pass", (key, c)
            votes = criteria[c]["votes"]
            assert isinstance(votes, list)
            mine = [v for v in votes if v["judge_profile_id"] == lax]
            assert mine and mine[0]["status"] == "pass" and mine[0]["eligible"] is False
            assert mine[0]["basis"] == "the gate rejected its calibration: no vote"
