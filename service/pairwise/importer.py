"""Import human pairwise preferences from a CSV file (all rows or none).

Columns (a header line is required): ``left``, ``right``, ``winner``, ``annotator``
(``left_file`` / ``right_file`` are accepted for the first two). ``left`` and ``right`` are SVG
files in the CSV's folder or below it (``../``, absolute names and symbolic links leading out
of the folder are refused without looking at what they name, so the import
reveals nothing about other files); each is read up to :data:`MAX_FILE_BYTES`, and only a
regular file is read (a FIFO or a device is refused at once, never waited on); ``winner`` is
``left``, ``right`` or ``tie``. Every bad row is reported with its line number and nothing is
stored; a good file stores each drawing in the blob store and one preference row per line. A
drawing is known by the sha256 of its SVG as the check stage extracts it
(``checks.extract_svg``), so a preference matches the stored runs that submitted the same
drawing.

Optional columns ``left_model`` and ``right_model`` name the model that made each drawing (else
drawings map to models through stored runs). Import is idempotent: a preference is keyed by
(task, criterion, annotator, left drawing, right drawing); a row already stored under its key with
the same winner and models adds nothing, a row that changed under its key is refused with its
line, and nothing of that file is stored. A task given to the import must be known.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from checks import extract_svg
from regua.errors import InputError
from regua.hashing import sha256_hex
from service.storage import Database, PairwisePreferenceRow
from service.storage.blobs import BlobStore
from service.tasks_store import StoredTaskRegistry
from tasks import bundled_registry

WINNERS = ("left", "right", "tie")
ALIASES = {"left_file": "left", "right_file": "right"}
REQUIRED = ("left", "right", "winner", "annotator")
MAX_ERRORS = 50
MAX_FILE_BYTES = 5_000_000
"""The largest drawing read (and the largest CSV: ``MAX_CSV_BYTES``)."""
MAX_CSV_BYTES = 20_000_000


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Opened without blocking (a FIFO does not hang the open), then checked to be a regular file
    (``/dev/zero`` or a FIFO is refused), then read up to ``limit + 1`` bytes: more is refused.
    Raises ``OSError`` (or ``ValueError`` for a file too large or not regular).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


def inside(folder: Path, name: str) -> Path | None:
    """``folder / name`` (or absolute ``name``) if inside ``folder``, links followed; else None."""
    root = folder.resolve()
    path = (root / name).resolve()
    return path if path.is_relative_to(root) else None


@dataclass(frozen=True)
class ParsedPreference:
    """One good row: the two drawings' bytes and names, the winner, the annotator, the line."""

    left: tuple[str, bytes]
    right: tuple[str, bytes]
    winner: str
    annotator: str
    line: int
    models: tuple[str | None, str | None] = (None, None)
    """The models that made the left and right drawings, when the file says."""

    def key(self) -> tuple[str, str, str]:
        """Annotator and the two drawings' sha256 (with task and criterion: the import key)."""
        return (self.annotator[:200], sha256_hex(self.left[1]), sha256_hex(self.right[1]))

    def value(self) -> tuple[str, str | None, str | None]:
        """What a row says under its key: the winner and the two models."""
        return (self.winner, *self.models)


@dataclass(frozen=True)
class ImportResult:
    """What an import did: rows stored now, rows already stored unchanged."""

    stored: int
    unchanged: int


def _svg(folder: Path, name: str, side: str) -> tuple[tuple[str, bytes] | None, str | None]:
    if not name:
        return None, f"{side} file is empty"
    path = inside(folder, name)
    if path is None:
        return None, f"{side} file {name!r} is not inside the CSV's folder"
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except (OSError, ValueError) as exc:
        why = exc if isinstance(exc, ValueError) else "no such readable file"
        return None, f"{side} file {name!r} cannot be read ({why})"
    found = extract_svg(data)
    if found.svg_text is None:
        return None, f"{side} file {name!r} is not an SVG drawing"
    return (name, found.svg_text.encode("utf-8")), None


def _row(folder: Path, row: dict[str, str], line: int) -> ParsedPreference | list[str]:
    cells = {
        ALIASES.get(k.strip().lower(), k.strip().lower()): (v or "").strip()
        for k, v in row.items()
        if k
    }
    errors: list[str] = []
    left, err_l = _svg(folder, cells.get("left", ""), "left")
    right, err_r = _svg(folder, cells.get("right", ""), "right")
    errors += [e for e in (err_l, err_r) if e]
    winner = cells.get("winner", "").lower()
    if winner not in WINNERS:
        errors.append(f"winner {cells.get('winner', '')!r} must be left, right or tie")
    if not cells.get("annotator"):
        errors.append("annotator is empty")
    if left and right and left[1] == right[1]:
        errors.append("left and right are the same drawing")
    if errors or left is None or right is None:
        return [f"line {line}: {e}" for e in errors]
    models = (cells.get("left_model") or None, cells.get("right_model") or None)
    return ParsedPreference(left, right, winner, cells["annotator"], line, models)


def parse_preferences(text: str, folder: Path) -> list[ParsedPreference]:
    """The rows of a preferences CSV; :class:`InputError` lists every bad line."""
    reader = csv.DictReader(io.StringIO(text))
    header = [ALIASES.get(h.strip().lower(), h.strip().lower()) for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(
            f"line 1: the header needs columns {', '.join(REQUIRED)} (missing {', '.join(missing)})"
        )
    good: list[ParsedPreference] = []
    errors: list[str] = []
    for row in reader:
        parsed = _row(folder, row, reader.line_num)
        if isinstance(parsed, list):
            errors.extend(parsed)
        else:
            good.append(parsed)
    if errors:
        shown = errors[:MAX_ERRORS] + (
            [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
        )
        raise InputError("no preference imported; fix these rows:\n" + "\n".join(shown))
    if not good:
        raise InputError("the file has a header but no preference rows")
    return good


def _check_task(db: Database, task_ref: str | None, criterion: str | None) -> None:
    """A task given to the import must be known (bundled or added), with that criterion."""
    if task_ref is None:
        return
    spec = StoredTaskRegistry(db, bundled_registry()).get(task_ref)  # UnknownTaskError names it
    if criterion is not None and criterion not in {c.id for c in spec.criteria}:
        known = ", ".join(c.id for c in spec.criteria)
        raise InputError(f"{task_ref} has no criterion {criterion!r} (it has {known})")


def _stored(
    s: Session, task_ref: str | None, criterion: str | None
) -> dict[tuple[str, str, str], tuple[tuple[str, str | None, str | None], str, int]]:
    """Stored preferences of (task, criterion) by key: their value, source file and line."""
    query = select(PairwisePreferenceRow).where(
        PairwisePreferenceRow.task_ref.is_(None)
        if task_ref is None
        else PairwisePreferenceRow.task_ref == task_ref,
        PairwisePreferenceRow.criterion.is_(None)
        if criterion is None
        else PairwisePreferenceRow.criterion == criterion,
    )
    return {
        (r.annotator, r.left_sha256, r.right_sha256): (
            (r.winner, r.left_model, r.right_model),
            r.source,
            r.line,
        )
        for r in s.scalars(query)
    }


def _new_rows(
    rows: list[ParsedPreference],
    stored: dict[tuple[str, str, str], tuple[tuple[str, str | None, str | None], str, int]],
) -> list[ParsedPreference]:
    """The rows not stored yet; a row changed under a stored (or earlier) key is refused."""
    seen: dict[tuple[str, str, str], ParsedPreference] = {}
    fresh: list[ParsedPreference] = []
    errors: list[str] = []
    for p in rows:
        key = p.key()
        if key in stored:
            value, source, line = stored[key]
            if value != p.value():
                errors.append(
                    f"line {p.line}: changed since it was imported (line {line} of {source} "
                    f"says winner {value[0]}); preferences are never overwritten"
                )
        elif key in seen:
            if seen[key].value() != p.value():
                errors.append(f"line {p.line}: contradicts line {seen[key].line} (same key)")
        else:
            seen[key] = p
            fresh.append(p)
    if errors:
        raise InputError(
            "no preference imported; fix these rows:\n" + "\n".join(errors[:MAX_ERRORS])
        )
    return fresh


def import_preferences(
    db: Database,
    blobs: BlobStore,
    path: Path,
    *,
    task_ref: str | None = None,
    criterion: str | None = None,
) -> ImportResult:
    """Import ``path`` (all rows or none); how many were stored and how many were already."""
    _check_task(db, task_ref, criterion)
    try:
        text = read_regular(path, MAX_CSV_BYTES).decode("utf-8-sig")
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    rows = parse_preferences(text, path.parent)
    with db.write() as s:
        fresh = _new_rows(rows, _stored(s, task_ref, criterion))
        for p in fresh:
            blobs.put(p.left[1])
            blobs.put(p.right[1])
            s.add(
                PairwisePreferenceRow(
                    left_sha256=sha256_hex(p.left[1]),
                    right_sha256=sha256_hex(p.right[1]),
                    left_name=p.left[0][:500],
                    right_name=p.right[0][:500],
                    winner=p.winner,
                    annotator=p.annotator[:200],
                    task_ref=task_ref,
                    criterion=criterion,
                    source=str(path)[:500],
                    line=p.line,
                    left_model=p.models[0][:200] if p.models[0] else None,
                    right_model=p.models[1][:200] if p.models[1] else None,
                )
            )
    return ImportResult(len(fresh), len(rows) - len(fresh))
