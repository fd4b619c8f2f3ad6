"""``regua tasks retire`` stores a retirement; ``regua tasks bank`` checks anchors (issue 16)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from regua.settings import Settings
from service.access.secret import open_database
from service.cli import app
from service.storage import TaskRetirement

REF = "pelican-bicycle-static@1"


def test_retire_stores_once_and_refuses_unknown_tasks(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"REGUA_DATA_DIR": str(data)}
    args = ["tasks", "retire", REF, "--note", "rotated out"]
    first = CliRunner().invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    assert f"{REF} retired at" in first.output and "pool core" in first.output
    again = CliRunner().invoke(app, ["tasks", "retire", REF], env=env)
    assert again.exit_code == 0
    unknown = CliRunner().invoke(app, ["tasks", "retire", "nope@1"], env=env)
    assert unknown.exit_code == 2 and "nope@1" in unknown.output
    db = open_database(Settings(data_dir=data))
    try:
        with db.read() as s:
            rows = s.scalars(select(TaskRetirement)).all()
            assert [(r.task_ref, r.note) for r in rows] == [(REF, "rotated out")]
    finally:
        db.dispose()


def test_bank_check_names_lost_anchors(tmp_path: Path) -> None:
    one = tmp_path / "v1.yaml"
    one.write_text("id: pb\nversion: 1\nitems: [a@1, b@1]\n")
    two = tmp_path / "v2.yaml"
    two.write_text("id: pb\nversion: 2\nitems: [a@1, c@1]\nanchors: [a@1]\n")
    ok = CliRunner().invoke(app, ["tasks", "bank", str(one), str(two)])
    assert ok.exit_code == 0 and "share their declared anchors" in ok.output
    assert "compare pb v1 and v2 on: --task a@1" in ok.output
    two.write_text("id: pb\nversion: 2\nitems: [c@1]\nanchors: [c@1]\n")
    bad = CliRunner().invoke(app, ["tasks", "bank", str(one), str(two)])
    assert bad.exit_code == 1 and "anchors missing from v1: ['c@1']" in bad.output
    missing = CliRunner().invoke(app, ["tasks", "bank", str(tmp_path / "none.yaml")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
