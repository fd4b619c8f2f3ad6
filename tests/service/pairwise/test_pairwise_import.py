"""``regua pairwise import``: human preferences from a CSV, all rows or none, errors by line."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from checks import extract_svg
from regua.hashing import sha256_hex
from service.cli import app
from service.storage import Database, PairwisePreferenceRow
from service.storage.blobs import LocalBlobStore
from tests.helpers.runs import TASK

SAMPLES = Path(__file__).resolve().parents[3] / "samples/outputs"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "prefs"
    folder.mkdir()
    for name in ("structured-good.svg", "structured-good-2.svg", "fail-B1-no-front-wheel.svg"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
    (folder / "notes.txt").write_text("not a drawing")
    return folder


def _rows(data: Path) -> list[PairwisePreferenceRow]:
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            return list(s.scalars(select(PairwisePreferenceRow)))
    finally:
        db.dispose()


def test_bad_rows_are_reported_by_line_and_nothing_is_stored(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    csv = folder / "prefs.csv"
    csv.write_text(
        "left,right,winner,annotator\n"
        "structured-good.svg,structured-good-2.svg,left,ann\n"
        "structured-good.svg,missing.svg,left,ann\n"
        "structured-good.svg,fail-B1-no-front-wheel.svg,better,ann\n"
        "notes.txt,structured-good.svg,tie,\n"
        "structured-good.svg,structured-good.svg,tie,bob\n"
    )
    data = tmp_path / "data"
    out = CliRunner().invoke(app, ["pairwise", "import", str(csv), "--data-dir", str(data)])
    assert out.exit_code == 2, out.output
    err = out.stderr
    assert "no preference imported" in err
    assert "line 3: right file 'missing.svg' cannot be read" in err
    assert "line 4: winner 'better' must be left, right or tie" in err
    assert "line 5: left file 'notes.txt' is not an SVG drawing" in err
    assert "line 5: annotator is empty" in err
    assert "line 6: left and right are the same drawing" in err
    assert "line 2" not in err
    assert _rows(data) == []


def test_a_missing_column_names_the_header(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    csv = folder / "prefs.csv"
    csv.write_text("left,right,annotator\nstructured-good.svg,structured-good-2.svg,ann\n")
    data = tmp_path / "data"
    out = CliRunner().invoke(app, ["pairwise", "import", str(csv), "--data-dir", str(data)])
    assert out.exit_code == 2
    assert "line 1: the header needs columns left, right, winner, annotator (missing winner)" in (
        out.stderr
    )
    assert _rows(data) == []


def test_a_good_file_stores_every_preference_with_the_drawings_hashes(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    csv = folder / "prefs.csv"
    csv.write_text(
        "left_file,right_file,winner,annotator\n"
        "structured-good.svg,fail-B1-no-front-wheel.svg,left,ann\n"
        f"{folder / 'structured-good-2.svg'},structured-good.svg,TIE,bob\n"
    )
    data = tmp_path / "data"
    unknown = ["pairwise", "import", str(csv), "--task", "no-such-task@9", "--criterion", "B1"]
    out = CliRunner().invoke(app, [*unknown, "--data-dir", str(data)])
    assert out.exit_code == 2 and "unknown task 'no-such-task@9'" in out.output
    assert _rows(data) == []
    args = ["pairwise", "import", str(csv), "--task", TASK, "--criterion", "B1"]
    out = CliRunner().invoke(app, [*args, "--data-dir", str(data)])
    assert out.exit_code == 0, out.output
    assert "imported 2 preference(s)" in out.output
    rows = _rows(data)
    found = extract_svg((SAMPLES / "structured-good.svg").read_bytes()).svg_text
    assert found is not None
    good = sha256_hex(found.encode())  # the drawing as the check stage extracts it
    assert [(r.left_sha256 == good, r.winner, r.annotator, r.line) for r in rows] == [
        (True, "left", "ann", 2),
        (False, "tie", "bob", 3),
    ]
    assert rows[1].right_sha256 == good and rows[0].criterion == "B1"
    assert LocalBlobStore(data / "artifacts").exists(good)  # kept to render later
