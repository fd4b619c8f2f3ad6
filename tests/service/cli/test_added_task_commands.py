"""Issue 22 point 1: every command that takes a task reference accepts an added task.

One data folder whose task store holds a task family written from scratch (``otter-kayak``,
registered like ``regua tasks add`` does) and one finished run of it through the real pipeline;
then each command resolves ``--task otter-kayak-static@1`` from that store, the way the service
does (bundled tasks plus the configured task store, here ``REGUA_DATA_DIR``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from regua.settings import Settings
from sandbox import WorkerPool
from service.cli import app
from service.context import ServiceContext
from service.pipeline.submit import Submission
from service.tasks_store import StoredTaskRegistry, register_task
from tasks.authoring import spec_from_data
from tests.helpers import otter
from tests.helpers.server import require_real_rendering
from tests.service.conftest import drain

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
REF = otter.REF


@dataclass(frozen=True)
class Store:
    """The data folder, a drawing of the task, a label folder of it, and a scratch folder."""

    data: Path
    drawing: Path
    labels: Path
    out: Path

    def run(self, *args: str) -> Result:
        """The real CLI with ``REGUA_DATA_DIR`` naming the data folder."""
        env = {"REGUA_DATA_DIR": str(self.data), "REGUA_RENDER_WORKERS": "1", "COLUMNS": "200"}
        return CliRunner().invoke(app, list(args), env=env)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, render_pool: WorkerPool) -> Store:
    """The otter task added to a data folder's task store, with one finished run of it."""
    require_real_rendering()
    root = tmp_path_factory.mktemp("added")
    data = root / "data"
    ctx = ServiceContext.open(Settings(data_dir=data, render_workers=1), render_pool=render_pool)
    drawings = otter.drawings()
    try:
        assert isinstance(ctx.registry, StoredTaskRegistry)
        register_task(ctx.registry, spec_from_data(otter.task_doc(), None, "test"), "test")
        ctx.submit([Submission(REF, "m", drawings["good-0.svg"][0])], None)
        drain(ctx)
    finally:
        ctx.close()
    drawing = root / "good-0.svg"
    drawing.write_text(drawings["good-0.svg"][0])
    two = {k: (v[0], {"F1": "pass"}) for k, v in drawings.items() if k.startswith("good-")}
    labels = otter.write_label_folder(root / "labels", dict(list(two.items())[:2]))
    return Store(data, drawing, labels, root / "out")


def _tasks_list(s: Store) -> None:
    got = s.run("tasks", "list", "--json")
    assert got.exit_code == 0, got.output
    lines = {d["ref"]: d for d in map(json.loads, got.output.splitlines())}
    assert lines[REF]["origin"] == "added" and lines[REF]["pool"] == "core"
    assert lines[REF]["state"] == "active" and lines[REF]["family"] == otter.FAMILY
    assert lines["pelican-bicycle-open@1"]["origin"] == "bundled"


def _tasks_show(s: Store) -> None:
    got = s.run("tasks", "show", REF)
    assert got.exit_code == 0, got.output
    assert f"family {otter.FAMILY} · added · pool core · active" in got.output
    assert "Is the otter sitting inside the kayak" in got.output


def _check(s: Store) -> None:
    got = s.run("check", str(s.drawing), "--task", REF, "--json")
    assert got.exit_code == 0, got.output
    line = json.loads(got.output.splitlines()[0])
    assert line["task"] == REF and line["status"] == "pass"


def _render(s: Store) -> None:
    got = s.run("render", str(s.drawing), "--task", REF, "--out", str(s.out / "render"))
    assert got.exit_code == 0, got.output
    assert got.output.startswith("ok: 1 frame(s)")
    png = (s.out / "render" / "frame-0.png").read_bytes()
    # the task's own render profile (400x300), from the IHDR chunk of the PNG
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == (400, 300)


def _judge(s: Store) -> None:
    args = ["judge", str(s.drawing), "--task", REF, "--profile", "static@1", "--no-render"]
    got = s.run(*args, "--json")
    assert got.exit_code == 0, got.output
    doc = json.loads(got.output)
    assert doc["task_ref"] == REF
    assert [v["criterion"] for v in doc["verdicts"]] == ["F1"]


def _perturb(s: Store) -> None:
    out = s.out / "perturbed"
    got = s.run("perturb", str(s.drawing), "--task", REF, "--out", str(out), "-p", "mirror")
    assert got.exit_code == 0, got.output
    (line,) = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    assert line["perturbation"]["id"] == "mirror" and (out / line["file"]).is_file()


def _calibrate(s: Store) -> None:
    args = ["calibrate", "--judge", "static@1", "--set", str(s.labels), "--task", REF]
    got = s.run(*args, "--split", "all", "--repeats", "1", "--n-boot", "100")
    assert got.exit_code == 0, got.output
    last = got.output.strip().splitlines()[-1]
    assert last.startswith("stored calibration run cal-")
    assert f"of family {otter.FAMILY}" in last and str(s.data.resolve()) in last


def _rescore(s: Store) -> None:
    got = s.run("rescore", "--task", REF, "--panel", "static-only@1")
    assert got.exit_code == 0, got.output
    assert "1 evaluations appended with static-only@1" in got.output


def _report(s: Store) -> None:
    got = s.run("report", "--task", REF, "--out", str(s.out / "report"), "--format", "json")
    assert got.exit_code == 0, got.output
    assert f"report of 1 runs over 1 task version(s) ({REF})" in got.output


def _retire(s: Store) -> None:
    got = s.run("tasks", "retire", REF, "--note", "rotated out")
    assert got.exit_code == 0, got.output
    assert f"{REF} retired at" in got.output
    listed = s.run("tasks", "list", "--json")
    line = next(d for d in map(json.loads, listed.output.splitlines()) if d["ref"] == REF)
    assert (line["state"], line["retired_note"]) == ("retired", "rotated out")


COMMANDS = {
    "tasks list": _tasks_list,
    "tasks show": _tasks_show,
    "check": _check,
    "render": _render,
    "judge": _judge,
    "perturb": _perturb,
    "calibrate": _calibrate,
    "rescore": _rescore,
    "report": _report,
    "tasks retire": _retire,
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_accepts_an_added_task(store: Store, command: str) -> None:
    COMMANDS[command](store)


def test_without_the_store_the_added_task_is_unknown(store: Store, tmp_path: Path) -> None:
    env = {"REGUA_DATA_DIR": str(tmp_path / "empty")}
    got = CliRunner().invoke(app, ["check", str(store.drawing), "--task", REF], env=env)
    assert got.exit_code == 2
    assert f"unknown task '{REF}'; known tasks: " in got.output
    assert "pelican-bicycle-animated@1" in got.output  # the bundled ones, not the store's
    assert not (tmp_path / "empty").exists()  # reading tasks never creates a database
