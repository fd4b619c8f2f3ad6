"""``regua labels export``: labels people gave in the review queue become a label folder that
``regua calibrate --set DIR`` reads (the round trip of issue 13 item 4).

Reviews are stored rows of a real database; the export and the calibration run through the CLI.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.calibration.sets import load_set
from service.cli import app
from service.storage import Database, ReviewItem, ReviewRow
from service.storage.blobs import NewArtifact, record_artifact
from tests.conftest import REPO_ROOT
from tests.helpers.review_runs import add_run, add_token, dispose_opened, open_db
from tests.service.calibration import pass_all

SVG = (REPO_ROOT / "samples" / "outputs" / "structured-good.svg").read_bytes()


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    dispose_opened()


def _item(db: Database, run_id: str, criterion: str, evaluation_id: int) -> str:
    item_id = f"{run_id}-{criterion}"
    with db.write() as s:
        s.add(
            ReviewItem(
                id=item_id,
                run_id=run_id,
                criterion=criterion,
                kind="uncertain",
                evaluation_id=evaluation_id,
                original_status="uncertain",
                reason="no_reliable_judge",
                audited_judges=[],
                reviews_needed=2,
            )
        )
    return item_id


def _review(
    db: Database, item: str, who: tuple[int, str], status: str, *, adjudication: bool = False
) -> None:
    with db.write() as s:
        s.add(
            ReviewRow(
                item_id=item,
                reviewer_id=who[0],
                reviewer_name=who[1],
                status=status,
                note=f"{who[1]} looked",
                adjudication=adjudication,
            )
        )


def _seed(data: Path) -> None:
    """Two reviewed runs: r1 has an extracted SVG, r2 only its raw reply."""
    db, blobs = open_db(data)
    people = {n: (add_token(db, n, "reviewer"), n) for n in ("alice", "bob", "carol")}
    ev1 = add_run(db, blobs, "r1", {}, outcome="needs_review")
    ev2 = add_run(db, blobs, "r2", {}, outcome="needs_review")
    with db.write() as s:
        record_artifact(s, blobs, "r1", NewArtifact("extracted", SVG, "extract", "1"))
    r1_r1, r1_r2, r2_r1 = (
        _item(db, "r1", "R1", ev1),
        _item(db, "r1", "R2", ev1),
        _item(db, "r2", "R1", ev2),
    )
    _review(db, r1_r1, people["alice"], "pass")
    _review(db, r1_r1, people["bob"], "pass")
    _review(db, r1_r2, people["alice"], "pass")
    _review(db, r1_r2, people["bob"], "fail")
    _review(db, r1_r2, people["carol"], "fail", adjudication=True)
    _review(db, r2_r1, people["alice"], "fail")


def test_review_labels_export_and_calibrate_round_trip(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed(data)
    out = tmp_path / "exported"
    runner = CliRunner()
    res = runner.invoke(app, ["labels", "export", "--out", str(out), "--data-dir", str(data)])
    assert res.exit_code == 0, res.output
    assert "6 labels on 2 drawings written to" in res.output
    with open(out / "labels.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["file"], r["criterion"], r["annotator"], r["status"], r["role"]) for r in rows] == [
        ("r1.svg", "R1", "alice", "pass", "annotator"),
        ("r1.svg", "R1", "bob", "pass", "annotator"),
        ("r1.svg", "R2", "alice", "pass", "annotator"),
        ("r1.svg", "R2", "bob", "fail", "annotator"),
        ("r1.svg", "R2", "carol", "fail", "adjudicator"),
        ("r2.txt", "R1", "alice", "fail", "annotator"),
    ]
    assert rows[0]["evidence"] == "alice looked" and rows[0]["time"]
    assert (out / "r1.svg").read_bytes() == SVG
    assert b"<svg/>" in (out / "r2.txt").read_bytes()  # the raw reply, extracted at calibration

    cal_set, artifact = load_set(str(out))
    assert cal_set.reference("r1.svg:R1").state == "consensus"
    assert (cal_set.reference("r1.svg:R2").state, cal_set.reference("r1.svg:R2").status) == (
        "adjudicated",
        "fail",
    )
    assert cal_set.reference("r2.txt:R1").status == "fail"
    assert artifact(cal_set.item("r2.txt:R1")) == b"<svg/>"
    assert artifact(cal_set.item("r1.svg:R1")) == SVG


@pytest.mark.browser
@pytest.mark.sandbox
def test_exported_review_labels_calibrate(tmp_path: Path) -> None:
    from tests.helpers.server import require_real_rendering

    require_real_rendering()
    data = tmp_path / "data"
    _seed(data)
    out = tmp_path / "exported"
    runner = CliRunner()
    res = runner.invoke(app, ["labels", "export", "--out", str(out), "--data-dir", str(data)])
    assert res.exit_code == 0, res.output
    profile = pass_all.register()
    args = ["calibrate", "--judge", profile.id, "--set", str(out), "--split", "all"]
    res = runner.invoke(
        app, [*args, "--repeats", "1", "--no-store"], env={"REGUA_RENDER_WORKERS": "1"}
    )
    assert res.exit_code == 0, res.output
    assert "labels: given by people (annotators)" in res.output
    assert "alice vs bob (n=2)" in res.output
    gate = [line for line in res.output.splitlines() if line.startswith("gate ")]
    assert gate and not any(": TRUSTED" in line for line in gate), gate
