"""Import and export of calibration sets as JSONL and CSV (text functions + file helpers).

JSONL: one record a line, each with a ``type``: ``set`` (id, task, description, split), then
``item`` and ``label`` records. CSV: two tables, ``items.csv`` and ``labels.csv``, with the set
fields in ``set.json`` beside them; labels may also be imported on their own (a spreadsheet from
annotators with columns ``item_id, annotator, status, time, evidence[, role]``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from judges.calibration.sets import CalibrationItem, CalibrationSet, Label, Split, as_provenance
from regua.errors import CalibrationError

ITEM_COLUMNS = (
    "item_id",
    "artifact_sha256",
    "artifact_file",
    "criterion",
    "criterion_kind",
    "task_ref",
    "style_tags",
    "group",
    "base_item_id",
    "relation",
    "perturbation",
)
LABEL_COLUMNS = ("item_id", "annotator", "role", "status", "time", "evidence")


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def set_to_jsonl(cal_set: CalibrationSet) -> str:
    """The set as JSONL text (set record first, then items, then labels)."""
    out = [_line({"type": "set", **cal_set.meta_dict()})]
    out += [_line({"type": "item", **i.to_dict()}) for i in cal_set.items]
    out += [_line({"type": "label", **lb.to_dict()}) for lb in cal_set.labels]
    return "".join(out)


def set_from_jsonl(text: str) -> CalibrationSet:
    """Parse JSONL text written by :func:`set_to_jsonl` (blank lines ignored)."""
    meta: dict[str, Any] | None = None
    items: list[CalibrationItem] = []
    labels: list[Label] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"line {n}: not JSON: {exc}") from exc
        kind = record.pop("type", None)
        if kind == "set":
            meta = record
        elif kind == "item":
            items.append(CalibrationItem.from_dict(record))
        elif kind == "label":
            labels.append(Label.from_dict(record))
        else:
            raise CalibrationError(f"line {n}: unknown record type {kind!r}")
    if meta is None:
        raise CalibrationError("JSONL set has no 'set' record")
    split = meta.get("split")
    return CalibrationSet(
        set_id=str(meta["set_id"]),
        task_ref=str(meta["task_ref"]),
        items=tuple(items),
        labels=tuple(labels),
        split=None if split is None else Split.from_dict(split),
        description=str(meta.get("description") or ""),
        label_provenance=as_provenance(meta.get("label_provenance")),
    )


def labels_to_jsonl(labels: list[Label] | tuple[Label, ...]) -> str:
    """Labels alone as JSONL (one label a line, no ``type`` field)."""
    return "".join(_line(lb.to_dict()) for lb in labels)


def labels_from_jsonl(text: str) -> tuple[Label, ...]:
    """Parse labels written by :func:`labels_to_jsonl` (a ``type`` field is tolerated)."""
    out: list[Label] = []
    for raw in text.split("\n"):
        if raw.strip():
            record = json.loads(raw)
            record.pop("type", None)
            out.append(Label.from_dict(record))
    return tuple(out)


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(
        buf, fieldnames=list(columns), lineterminator="\n", quoting=csv.QUOTE_ALL
    )
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
    return buf.getvalue()


def _csv_rows(text: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise CalibrationError(f"CSV lacks columns {missing}")
    return [dict(row) for row in reader]


def items_to_csv(items: tuple[CalibrationItem, ...] | list[CalibrationItem]) -> str:
    """Items as CSV text (style tags joined with ';')."""
    rows = []
    for item in items:
        row = item.to_dict()
        row["style_tags"] = ";".join(item.style_tags)
        rows.append(row)
    return _csv_text(ITEM_COLUMNS, rows)


def items_from_csv(text: str) -> tuple[CalibrationItem, ...]:
    """Parse items written by :func:`items_to_csv`."""
    required = ("item_id", "artifact_sha256", "criterion", "task_ref")
    return tuple(CalibrationItem.from_dict(row) for row in _csv_rows(text, required))


def labels_to_csv(labels: tuple[Label, ...] | list[Label]) -> str:
    """Labels as CSV text."""
    return _csv_text(LABEL_COLUMNS, [lb.to_dict() for lb in labels])


def labels_from_csv(text: str) -> tuple[Label, ...]:
    """Parse labels from CSV (``role`` optional, defaults to ``annotator``)."""
    rows = _csv_rows(text, ("item_id", "annotator", "status"))
    return tuple(Label.from_dict(row) for row in rows)


# --- file helpers (the only I/O of this package besides the bundled-set loader) --------------


def write_set(cal_set: CalibrationSet, path: Path) -> list[Path]:
    """Write a set: ``*.jsonl`` → one JSONL file; a directory → set.json, items.csv, labels.csv."""
    if path.suffix == ".jsonl":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(set_to_jsonl(cal_set), encoding="utf-8")
        return [path]
    path.mkdir(parents=True, exist_ok=True)
    files = {
        "set.json": json.dumps(cal_set.meta_dict(), indent=2, sort_keys=True) + "\n",
        "items.csv": items_to_csv(cal_set.items),
        "labels.csv": labels_to_csv(cal_set.labels),
    }
    for name, text in files.items():
        with open(path / name, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return [path / name for name in files]


def _read_exact(path: Path) -> str:
    """File text without newline translation (CSV fields may hold CR and LF)."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def read_set(path: Path) -> CalibrationSet:
    """Read a set written by :func:`write_set` (JSONL file or CSV directory)."""
    if path.is_dir():
        meta = json.loads((path / "set.json").read_text(encoding="utf-8"))
        split = meta.get("split")
        return CalibrationSet(
            set_id=str(meta["set_id"]),
            task_ref=str(meta["task_ref"]),
            items=items_from_csv(_read_exact(path / "items.csv")),
            labels=labels_from_csv(_read_exact(path / "labels.csv")),
            split=None if split is None else Split.from_dict(split),
            description=str(meta.get("description") or ""),
            label_provenance=as_provenance(meta.get("label_provenance")),
        )
    if not path.is_file():
        raise CalibrationError(f"no calibration set at {path}")
    return set_from_jsonl(path.read_text(encoding="utf-8"))
