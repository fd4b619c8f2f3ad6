"""Issue 22, acceptance: a task family written from scratch is decided without a person.

An otter in a kayak (family ``animals-in-vehicles``, three necessary visual criteria besides F1)
is registered with ``regua tasks add`` against ``regua serve`` (a subprocess), listed by
``regua tasks list``, given a panel with ``regua judges add`` (picked up without a restart), and
its vision judge — configured only by ``REGUA_JUDGE_BASE_URL`` / ``REGUA_JUDGE_MODEL``, pointing
at a local fake OpenAI-compatible server — is calibrated by ``regua calibrate --judge
vision-llm-openai@1 --set DIR --split all --task REF --data-dir D`` from a plain ``labels.csv``.
A model that passes everything is never trusted for the family; the model that answers from
the truth (by the sha256 of the frames it is shown) is, and the runs submitted with the panel
pass and fail as the truth says.

Then what cannot be undone by accident: a one-file non-SVG upload is refused (422, the file
named, nothing stored); a smaller set that would demote the trusted judge is refused without
``--replace`` and stored with it; the gate history lists both. Last, ``regua calibrate``
without ``--data-dir`` stores in the default data folder (``data`` under the working folder)
and says where, and a service started on that folder seats the judge.

Labels: 12 drawings (4 whole scenes, 4 without the otter, 4 without the kayak) give each
criterion at least 4 ``pass`` and 4 ``fail`` labels, what the gate needs to trust a recall.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from typer.testing import CliRunner, Result

from judges.calibration.runner import CalibrationRun
from regua.llm.testing import FakeModelServer, FrameTruth, serving
from service.api.client import read_token
from service.calibration.verdicts import KIND
from service.cli import app
from service.storage import Artifact, CalibrationRunRow, Database
from tests.helpers import otter
from tests.helpers.httpclient import Http
from tests.helpers.server import REPO, Served, require_real_rendering
from tests.service.calibration.pass_all_llm import pass_everything_model

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
JUDGE = "vision-llm-openai@1"
SEEING = "vision-llm-openai+seeing-test@1"
LAX = "vision-llm-openai+lax-test@1"
GATE_TTL_S = 5.0
"""How long a running service may read a cached gate table (``StoredEligibility.ttl_s``)."""


@dataclass
class World:
    """The served service, the fake models, the folders, and what calibrating gave."""

    root: Path
    data: Path
    judges_dir: Path
    labels: Path
    served: Served
    seeing: FakeModelServer[FrameTruth]
    lax: FakeModelServer[FrameTruth]
    runs: dict[str, CalibrationRun]

    def cli(self, *args: str, model: str = "seeing-test", url: str | None = None) -> Result:
        """The real CLI with the vision judge of ``model`` (the seeing server by default)."""
        env = {
            "REGUA_JUDGE_BASE_URL": (url or self.seeing.url) + "/v1",
            "REGUA_JUDGE_MODEL": model,
            "REGUA_JUDGES_DIR": str(self.judges_dir),
            "REGUA_RENDER_WORKERS": "1",  # a second worker costs ~2.5 CPU s to start
            "COLUMNS": "200",
        }
        return CliRunner().invoke(app, list(args), env=env)

    def http(self) -> httpx.Client:
        """An admin client of the served service."""
        token = read_token(self.data)
        headers = {"Authorization": f"Bearer {token}"}
        return Http(base_url=self.served.url, headers=headers, timeout=120)

    def calibrate(self, name: str, *extra: str, model: str, url: str) -> Result:
        """``regua calibrate --judge vision-llm-openai@1 --set DIR --split all --task REF``."""
        out = self.root / f"{name}.json"
        args = ["calibrate", "--judge", JUDGE, "--set", str(self.labels), "--split", "all"]
        args += ["--task", otter.REF, "--repeats", "1", "--n-boot", "200", "--out", str(out)]
        got = self.cli(*args, *extra, model=model, url=url)
        if got.exit_code == 0:
            self.runs[name] = CalibrationRun.from_dict(json.loads(out.read_text()))
        return got


def _serve(data: Path, judges_dir: Path, seeing: FakeModelServer[FrameTruth]) -> Served:
    env = {
        "REGUA_JUDGE_BASE_URL": seeing.url + "/v1",
        "REGUA_JUDGE_MODEL": "seeing-test",
        "REGUA_JUDGES_DIR": str(judges_dir),
    }
    return Served(data, **env)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """``regua serve`` on a fresh data folder, a judges folder and both fake models."""
    require_real_rendering()
    root = tmp_path_factory.mktemp("family")
    judges_dir = root / "judges"
    judges_dir.mkdir()
    labels = otter.write_label_folder(root / "labelled", otter.drawings())
    with serving(FrameTruth()) as seeing, pass_everything_model() as lax:
        served = _serve(root / "data", judges_dir, seeing)
        found = World(root, root / "data", judges_dir, labels, served, seeing, lax, {})
        try:
            yield found
        finally:
            found.served.stop()


def _panel_lines(world: World) -> dict[str, dict[str, Any]]:
    with world.http() as client:
        got = client.get("/v1/panels")
    assert got.status_code == 200, got.text
    return {p["id"]: p for p in got.json()["panels"]}


def _register_task_and_panel(world: World) -> None:
    task_file = otter.write_task(world.root / "otter.yaml")
    panel_file = world.root / "otter-panel.yaml"
    panel_file.write_text(otter.PANEL_YAML)
    dir_args = ["--dir", str(world.judges_dir), "--data-dir", str(world.data)]
    early = world.cli("judges", "add", str(panel_file), *dir_args)
    assert early.exit_code == 2
    assert f"family {otter.FAMILY!r} has no registered task version" in early.output
    token = read_token(world.data)
    assert token is not None
    added = world.cli("tasks", "add", str(task_file), "--url", world.served.url, "--token", token)
    assert added.exit_code == 0, added.output
    assert f"{otter.REF}  added" in added.output
    listed = world.cli("tasks", "list", "--json", "--data-dir", str(world.data))
    assert listed.exit_code == 0, listed.output
    line = next(json.loads(x) for x in listed.output.splitlines() if otter.REF in x)
    assert (line["origin"], line["pool"], line["state"]) == ("added", "core", "active")
    served = world.cli("tasks", "list", "--url", world.served.url, "--token", token)
    assert served.exit_code == 0, served.output
    row = next(x for x in served.output.splitlines() if otter.REF in x)
    assert row.split()[:4] == [otter.REF, "added", "core", "active"]
    # a family without a panel of its own: the static rules and the settings' vision judge
    default = _panel_lines(world)["family-default@1"]
    assert otter.REF in default["default_for_tasks"]
    assert default["assignments"] == {"*": ["static@1", JUDGE], "F1": ["static@1"]}
    panel = world.cli("judges", "add", str(panel_file), *dir_args)
    assert panel.exit_code == 0, panel.output
    assert f"panel {otter.PANEL}  family {otter.FAMILY}" in panel.output
    deadline = time.monotonic() + 60  # the service looks at the folder at most once a second
    while otter.PANEL not in (lines := _panel_lines(world)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert lines[otter.PANEL]["default_for_tasks"] == [otter.REF], lines.get(otter.PANEL)


def _frames_by_file(data: Path, folder: Path) -> dict[str, list[str]]:
    """file → the sha256 of each frame PNG of its kept calibration render."""
    by_sha = {hashlib.sha256(p.read_bytes()).hexdigest(): p.name for p in folder.glob("*.svg")}
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            rows = s.execute(
                select(Artifact.name, Artifact.sha256).where(Artifact.kind == KIND)
            ).all()
    finally:
        db.dispose()
    out: dict[str, list[str]] = {}
    for name, sha in rows:
        log = json.loads((data / "artifacts" / sha[:2] / sha[2:4] / sha).read_bytes())
        out[by_sha[name.split("|")[0]]] = [f["sha256"] for f in log["frames"]]
    return out


def _statuses(run: CalibrationRun) -> dict[str, str | None]:
    return {d.criterion: d.status for d in run.decisions}


def _submit(world: World, names: list[str]) -> dict[str, dict[str, Any]]:
    drawings = otter.drawings()
    with world.served.client() as client:
        batch = [
            {
                "task": otter.REF,
                "model": {"label": f"m-{name}"},
                "output": drawings[name][0],
                "panel": otter.PANEL,
            }
            for name in names
        ]
        ids = client.submit_batch(batch)
        views = client.wait(ids, timeout_s=300)
    return {name: views[run_id] for name, run_id in zip(names, ids, strict=True)}


def _criteria(view: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c["criterion"]): c for c in view["evaluation"]["criteria"]}


def test_a_new_family_is_registered_calibrated_and_decided_without_a_person(
    world: World,
) -> None:
    _register_task_and_panel(world)
    lax = world.calibrate("lax", "--data-dir", str(world.data), model="lax-test", url=world.lax.url)
    assert lax.exit_code == 0, lax.output
    assert f"judge {LAX}" in lax.output
    assert _statuses(world.runs["lax"]) == dict.fromkeys(otter.VISUAL, "not_trusted")
    assert f"{LAX} votes on no criterion of family {otter.FAMILY}" in lax.output
    frames = _frames_by_file(world.data, world.labels)
    for name, (_svg, labels) in otter.drawings().items():
        world.seeing.model.learn(frames[name], labels)
    seeing = world.calibrate(
        "seeing", "--data-dir", str(world.data), model="seeing-test", url=world.seeing.url
    )
    assert seeing.exit_code == 0, seeing.output
    run = world.runs["seeing"]
    assert run.task_family == otter.FAMILY and run.task_ref == otter.REF
    assert _statuses(run) == dict.fromkeys(otter.VISUAL, "trusted"), [
        (d.criterion, d.reasons) for d in run.decisions
    ]
    last = seeing.output.strip().splitlines()[-1]
    assert str((world.data / "regua.sqlite3").resolve()) in last
    assert f"{SEEING} votes on K1, O1, R1 of family {otter.FAMILY} since " in last
    time.sleep(GATE_TTL_S + 0.5)  # the running service re-reads its gate table by then
    views = _submit(world, ["good-0.svg", "no-kayak-1.svg"])
    assert views["good-0.svg"]["outcome"]["status"] == "pass", views["good-0.svg"]["outcome"]
    assert views["no-kayak-1.svg"]["outcome"]["status"] == "fail"
    truth = otter.drawings()
    for name, view in views.items():
        assert view["evaluation"]["versions"]["judge_panel"]["id"] == otter.PANEL
        criteria = _criteria(view)
        for c in otter.VISUAL:
            assert criteria[c]["status"] == truth[name][1][c], (name, c)
            counted = [v for v in criteria[c]["votes"] if v["eligible"]]
            assert [v["judge_profile_id"] for v in counted] == [SEEING], (name, c)
        assert criteria["F1"]["status"] == "pass"
    # the lax model never earned a vote for the family
    with world.http() as client:
        gate = client.get("/v1/gate", params={"judge": LAX}).json()["decisions"]
    assert {(d["criterion"], d["status"]) for d in gate} == {
        (c, "not_trusted") for c in otter.VISUAL
    }


def _stored_runs(world: World) -> int:
    db = Database(f"sqlite:///{world.data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            return len(s.scalars(select(CalibrationRunRow.id)).all())
    finally:
        db.dispose()


def test_a_bad_upload_or_a_smaller_demoting_set_changes_nothing(world: World) -> None:
    if "seeing" not in world.runs:
        pytest.skip("needs the calibrated family of the test before it")
    before = _stored_runs(world)
    _bad_upload_stores_nothing(world)
    assert _stored_runs(world) == before
    _smaller_set_demotes_only_with_replace(world)
    assert _stored_runs(world) == before + 1
    _history_lists_both(world)


def _bad_upload_stores_nothing(world: World) -> None:
    csv_text = "file,criterion,status,annotator\na.svg,O1,pass,al\n"
    body = {
        "judge": JUDGE,
        "task": otter.REF,
        "split": "all",
        "wait": True,
        "upload": {"labels_csv": csv_text, "files": {"a.svg": "not svg"}},
    }
    with world.http() as client:
        refused = client.post("/v1/calibrations", json=body)
    assert refused.status_code == 422, refused.text
    assert "a.svg: not an SVG document" in refused.json()["detail"]


def _smaller_set_demotes_only_with_replace(world: World) -> None:
    """Four drawings labelled the opposite of what they show: fewer items than the 12 that
    earned the trust, and the judge disagrees with every label."""
    small = world.root / "small"
    flipped = {
        name: (svg, {c: "fail" if s == "pass" else "pass" for c, s in labels.items()})
        for name, (svg, labels) in list(otter.drawings().items())[:4]
    }
    otter.write_label_folder(small, flipped)
    args = ["calibrate", "--judge", JUDGE, "--set", str(small), "--split", "all"]
    args += ["--task", otter.REF, "--repeats", "1", "--n-boot", "200"]
    args += ["--data-dir", str(world.data)]
    no = world.cli(*args)
    assert no.exit_code == 1, no.output
    assert "calibration not stored: a smaller set would demote a trusted judge" in no.output
    since = world.runs["seeing"].decisions[0].decided_at
    assert f"trusted since {since} on set 'labelled' (12 labelled items), would become " in (
        no.output
    )
    assert "not_trusted on set 'small' (4 labelled items)" in no.output
    yes = world.cli(*args, "--replace")
    assert yes.exit_code == 0, yes.output


def _history_lists_both(world: World) -> None:
    history = world.cli("gate", "history", JUDGE, "--data-dir", str(world.data), "--json")
    assert history.exit_code == 0, history.output
    mine = [d for d in json.loads(history.output) if d["profile_id"] == SEEING]
    o1 = [(d["status"], d["set_id"], d["set_size"]) for d in mine if d["criterion"] == "O1"]
    assert o1 == [("trusted", "labelled", 12), ("not_trusted", "small", 4)]
    assert any("replaces (--replace) the trusted decision" in r for r in mine[-1]["reasons"])
    with world.http() as client:
        over_http = client.get("/v1/gate", params={"history": "true", "judge": JUDGE}).json()
    statuses = [d["status"] for d in over_http["decisions"] if d["profile_id"] == SEEING]
    assert statuses[:2] == ["trusted", "not_trusted"]
    printed = world.cli("gate", "history", JUDGE, "--data-dir", str(world.data))
    assert f"{SEEING}  family {otter.FAMILY}  criterion O1" in printed.output
    assert "set small (4 labelled)" in printed.output
    assert "set labelled (12 labelled)" in printed.output


def test_calibrate_without_data_dir_stores_in_the_default_folder(world: World) -> None:
    """``regua calibrate`` in the folder holding ``data`` (no --data-dir, no REGUA_DATA_DIR)."""
    if "seeing" not in world.runs:
        pytest.skip("needs the calibrated family of the test before it")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REGUA_")}
    env |= {
        "PYTHONPATH": str(REPO),
        "REGUA_JUDGE_BASE_URL": world.seeing.url + "/v1",
        "REGUA_JUDGE_MODEL": "seeing-test",
        "REGUA_RENDER_WORKERS": "1",
    }
    args = ["calibrate", "--judge", JUDGE, "--set", str(world.labels), "--split", "all"]
    args += ["--task", otter.REF, "--repeats", "1", "--n-boot", "200"]
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=world.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("stored calibration run cal-")
    assert f"in {(world.data / 'regua.sqlite3').resolve()}:" in last
    assert f"{SEEING} votes on K1, O1, R1 of family {otter.FAMILY} since " in last
    assert f"(regua serve --data-dir {world.data.resolve()})" in last
    world.served.stop()
    world.served = _serve(world.data, world.judges_dir, world.seeing)
    views = _submit(world, ["good-2.svg"])
    assert views["good-2.svg"]["outcome"]["status"] == "pass", views["good-2.svg"]["outcome"]
    for c in otter.VISUAL:
        counted = [v for v in _criteria(views["good-2.svg"])[c]["votes"] if v["eligible"]]
        assert [v["judge_profile_id"] for v in counted] == [SEEING]
        assert counted[0]["basis"] == "the gate passed its calibration"
