"""Calibration sets from plain label files: a folder of drawings and one ``labels.csv``.

``labels.csv`` has one row per (file, criterion, annotator) with the columns
``file, criterion, status, annotator`` and optionally ``time``, ``evidence`` and ``role``
(``annotator`` or ``adjudicator``). ``file`` names a drawing (an SVG, or a raw model reply from
which the SVG is extracted) in the same folder. Each (file, criterion) is one calibration item
(id ``FILE:CRITERION``, grouped by file so a split keeps a drawing's criteria on one side);
several annotators per item are compared (kappa) and items they disagree on are disputed: they
stay out of the gate and are listed.

The same table is what ``regua labels export`` writes from the review queue, so reviewed items
become calibration data. Pure text functions plus :func:`read_label_folder`.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judges.calibration.sets import CalibrationItem, CalibrationSet, Label, as_role, make_split
from regua.errors import CalibrationError
from tasks import TaskSpec

LABEL_TABLE = "labels.csv"
"""The name of the label table inside a label folder."""
REQUIRED_COLUMNS = ("file", "criterion", "status", "annotator")
OPTIONAL_COLUMNS = ("time", "evidence", "role")
DEFAULT_TASK = "pelican-bicycle-structured@1"
"""The task a label folder is labelled against unless another is named."""


@dataclass(frozen=True)
class LabelRow:
    """One row of ``labels.csv``: one annotator's status for one criterion of one file."""

    file: str
    criterion: str
    status: str
    annotator: str
    time: str = ""
    evidence: str = ""
    role: str = "annotator"
    line: int = field(default=0, compare=False)
    """Its line in ``labels.csv`` (0: not read from a file); named when the row is refused."""


@dataclass(frozen=True)
class LabelFolder:
    """A calibration set read from a label table, with its artifacts by file name."""

    calibration_set: CalibrationSet
    files: Mapping[str, bytes]


def is_label_folder(path: Path) -> bool:
    """Whether ``path`` is a folder with ``labels.csv`` and no ``set.json`` (a plain label set)."""
    return path.is_dir() and (path / LABEL_TABLE).is_file() and not (path / "set.json").exists()


def parse_label_table(text: str) -> tuple[LabelRow, ...]:
    """Parse ``labels.csv`` text (CalibrationError naming the missing columns or bad row)."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise CalibrationError(
            f"{LABEL_TABLE} lacks columns {missing} (needs {', '.join(REQUIRED_COLUMNS)})"
        )
    rows: list[LabelRow] = []
    for n, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        empty = [c for c in REQUIRED_COLUMNS if not row.get(c)]
        if empty:
            raise CalibrationError(f"{LABEL_TABLE} line {n}: empty {', '.join(empty)}")
        rows.append(
            LabelRow(
                file=row["file"],
                criterion=row["criterion"],
                status=row["status"].lower(),
                annotator=row["annotator"],
                time=row.get("time", ""),
                evidence=row.get("evidence", ""),
                role=row.get("role") or "annotator",
                line=n,
            )
        )
    if not rows:
        raise CalibrationError(f"{LABEL_TABLE} has no label rows")
    return tuple(rows)


def label_table_csv(rows: Iterable[LabelRow]) -> str:
    """Rows as ``labels.csv`` text (the columns :func:`parse_label_table` reads)."""
    buf = io.StringIO()
    columns = [*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS]
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: getattr(r, c) for c in columns})
    return buf.getvalue()


def item_id(file: str, criterion: str) -> str:
    """The calibration item id of one criterion of one file."""
    return f"{file}:{criterion}"


def _items(
    rows: tuple[LabelRow, ...], files: Mapping[str, bytes], task: TaskSpec
) -> list[CalibrationItem]:
    known = {c.id: c for c in task.criteria}
    items: dict[str, CalibrationItem] = {}
    for r in rows:
        where = f"{LABEL_TABLE} line {r.line}" if r.line else LABEL_TABLE
        if r.criterion not in known:
            raise CalibrationError(
                f"{where}: {task.ref} (family {task.family}) has no criterion {r.criterion!r} "
                f"(it has {', '.join(sorted(known))})"
            )
        if r.file not in files:
            raise CalibrationError(f"{where} names {r.file!r}, which is not in the folder")
        key = item_id(r.file, r.criterion)
        if key not in items:
            items[key] = CalibrationItem(
                item_id=key,
                artifact_sha256=hashlib.sha256(files[r.file]).hexdigest(),
                criterion=r.criterion,
                task_ref=task.ref,
                criterion_kind=str(known[r.criterion].kind),
                artifact_file=r.file,
                group=r.file,
            )
    return [items[k] for k in sorted(items)]


def _label(row: LabelRow, task: TaskSpec, line: int) -> Label:
    """One row as a label: on a graded criterion the ``status`` column may hold a level."""
    criterion = task.criterion(row.criterion)
    status, level = row.status, None
    if status.isdigit():
        if not criterion.graded:
            raise CalibrationError(
                f"{LABEL_TABLE} line {line}: {row.criterion} is not graded; a status is one of "
                "pass, fail, uncertain, not_applicable"
            )
        low, high = criterion.levels()
        level = int(status)
        if not low <= level <= high:
            raise CalibrationError(
                f"{LABEL_TABLE} line {line}: level {level} is off {row.criterion}'s scale "
                f"{criterion.scale}"
            )
        status = task.level_status(row.criterion, level)
    return Label(
        item_id=item_id(row.file, row.criterion),
        annotator=row.annotator,
        status=status,
        time=row.time,
        evidence=row.evidence,
        role=as_role(row.role),
        level=level,
    )


def set_from_label_table(
    text: str,
    files: Mapping[str, bytes],
    task: TaskSpec,
    *,
    set_id: str,
    seed: int = 0,
    held_out_fraction: float = 0.5,
) -> LabelFolder:
    """Build a calibration set from ``labels.csv`` text and the files it names.

    The stored split (by file, seeded) is made when there are at least two files; with one
    file only ``--split all`` can be used.
    """
    rows = parse_label_table(text)
    items = _items(rows, files, task)
    labels = tuple(_label(r, task, n) for n, r in enumerate(rows, start=2))
    groups = {i.group for i in items}
    split = make_split(items, seed, held_out_fraction) if len(groups) >= 2 else None
    cal_set = CalibrationSet(
        set_id=set_id,
        task_ref=task.ref,
        items=tuple(items),
        labels=labels,
        split=split,
        description=f"label table {LABEL_TABLE} ({len(rows)} labels on {len(items)} items)",
    )
    used = {r.file for r in rows}
    return LabelFolder(cal_set, {k: v for k, v in files.items() if k in used})


def read_label_folder(path: Path, task: TaskSpec, *, seed: int = 0) -> LabelFolder:
    """Read a label folder: ``labels.csv`` and the files it names (set id: the folder name)."""
    with open(path / LABEL_TABLE, encoding="utf-8", newline="") as fh:
        text = fh.read()
    names = {r.file for r in parse_label_table(text)}
    files: dict[str, bytes] = {}
    for name in sorted(names):
        target = (path / name).resolve()
        if path.resolve() not in target.parents or not target.is_file():
            raise CalibrationError(f"{LABEL_TABLE} names {name!r}, which is not in {path}")
        files[name] = target.read_bytes()
    return set_from_label_table(text, files, task, set_id=path.resolve().name, seed=seed)
