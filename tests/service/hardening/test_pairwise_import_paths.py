"""``regua pairwise import`` reads only regular files inside the CSV's folder, bounded.

Was: a row's file could be ``../``, an absolute path or a symbolic link out of the folder (the
message told whether the file existed), ``/dev/zero`` was read without bound and a FIFO hung the
command. Now each such row is refused with its line (exit 2), saying nothing about what the
name points to, and nothing is stored.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from service.cli import app
from service.pairwise.importer import MAX_FILE_BYTES
from service.storage import Database, PairwisePreferenceRow

SAMPLES = Path(__file__).resolve().parents[3] / "samples/outputs"
GOOD = "structured-good.svg"


def _import(tmp_path: Path, right: str) -> tuple[int, str, int]:
    """Import one row ``GOOD,right``: exit code, stderr and preferences stored."""
    folder = tmp_path / "prefs"
    csv = folder / "prefs.csv"
    csv.write_text(f"left,right,winner,annotator\n{GOOD},{right},left,ann\n")
    data = tmp_path / "data"
    out = CliRunner().invoke(app, ["pairwise", "import", str(csv), "--data-dir", str(data)])
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    try:
        with db.read() as s:
            stored = len(list(s.scalars(select(PairwisePreferenceRow))))
    finally:
        db.dispose()
    return out.exit_code, out.stderr, stored


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The CSV's folder with one drawing, a secret drawing beside it and links out."""
    inner = tmp_path / "prefs"
    inner.mkdir()
    (inner / GOOD).write_bytes((SAMPLES / GOOD).read_bytes())
    (tmp_path / "secret.svg").write_bytes((SAMPLES / "structured-good-2.svg").read_bytes())
    (inner / "link.svg").symlink_to(tmp_path / "secret.svg")
    (inner / "zero.svg").symlink_to("/dev/zero")
    os.mkfifo(inner / "fifo.svg")
    return inner


OUTSIDE = "is not inside the CSV's folder"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("../secret.svg", OUTSIDE),  # exists
        ("../missing.svg", OUTSIDE),  # does not: the same answer
        ("{tmp}/secret.svg", OUTSIDE),
        ("/etc/passwd", OUTSIDE),
        ("link.svg", OUTSIDE),  # a symbolic link out of the folder
        ("zero.svg", OUTSIDE),  # a link to /dev/zero
        ("fifo.svg", "cannot be read (not a regular file)"),  # never waited on
    ],
)
@pytest.mark.usefixtures("folder")
def test_a_file_outside_the_folder_or_not_regular_is_refused(
    tmp_path: Path, name: str, said: str
) -> None:
    right = name.format(tmp=tmp_path)
    code, err, stored = _import(tmp_path, right)
    assert code == 2
    assert f"line 2: right file {right!r} {said}" in err
    assert stored == 0
    assert str(tmp_path) not in err.replace(right, "")  # no resolved path shown


def test_a_huge_file_is_refused_after_a_bounded_read(tmp_path: Path, folder: Path) -> None:
    with (folder / "huge.svg").open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 10)  # sparse: no disk used
    code, err, stored = _import(tmp_path, "huge.svg")
    assert code == 2 and f"cannot be read (larger than {MAX_FILE_BYTES} bytes)" in err
    assert stored == 0


def test_a_file_in_the_folder_or_below_is_imported(tmp_path: Path, folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "sub" / "b.svg").write_bytes((SAMPLES / "structured-good-2.svg").read_bytes())
    code, err, stored = _import(tmp_path, "sub/b.svg")
    assert (code, stored) == (0, 1), err
