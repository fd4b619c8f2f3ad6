"""A generated label folder: drawings of the bundled set as flat SVG files and a ``labels.csv``
by two annotators, ``alice`` and ``bob``, who disagree on a few items.

``alice`` writes the bundled set's reference status of each geometry criterion; ``bob`` writes
the same except on :data:`BOB_FLIPS` items, where he says the opposite (pass <-> fail).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from judges.calibration import load_bundled_set

GEOMETRY = ("B1", "B2", "R1", "R2", "R3")
N_DRAWINGS = 24
BOB_FLIPS = 4
"""Every how-manyth labelled item bob flips is derived from this count (see :func:`make`)."""


@dataclass(frozen=True)
class LabelFolder:
    """The folder and what a test can assert about it."""

    path: Path
    items: tuple[str, ...]
    """Every labelled item id (``FILE:CRITERION``)."""
    disputed: tuple[str, ...]
    """Items alice and bob disagree on."""


def make(path: Path, *, n_drawings: int = N_DRAWINGS) -> LabelFolder:
    """Write ``n_drawings`` drawings and their ``labels.csv`` into ``path``."""
    bundle = load_bundled_set()
    cal = bundle.calibration_set
    path.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    items: list[str] = []
    for drawing in bundle.drawings[:n_drawings]:
        name = f"{drawing.drawing_id}.svg"
        (path / name).write_bytes(drawing.svg)
        for item in cal.items:
            ref = cal.reference(item.item_id).status
            if item.artifact_file != drawing.file or item.criterion not in GEOMETRY:
                continue
            if ref not in ("pass", "fail"):
                continue
            items.append(f"{name}:{item.criterion}")
            rows.append(_row(name, item.criterion, ref, "alice"))
    step = len(items) // BOB_FLIPS
    flipped = {items[k] for k in range(step // 2, len(items), step)}
    for row in list(rows):
        key = f"{row['file']}:{row['criterion']}"
        status = row["status"]
        if key in flipped:
            status = "fail" if status == "pass" else "pass"
        rows.append(_row(row["file"], row["criterion"], status, "bob"))
    with open(path / "labels.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "criterion", "status", "annotator", "time"])
        writer.writeheader()
        writer.writerows(rows)
    return LabelFolder(path, tuple(items), tuple(sorted(flipped)))


def _row(file: str, criterion: str, status: str, annotator: str) -> dict[str, str]:
    time = "2026-12-01T10:00:00Z" if annotator == "alice" else "2026-12-01T11:00:00Z"
    return {
        "file": file,
        "criterion": criterion,
        "status": status,
        "annotator": annotator,
        "time": time,
    }
