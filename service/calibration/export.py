"""Labels given in the review queue, exported as a label folder (``regua labels export``).

Every stored review of a run of one task becomes a row of ``labels.csv`` (``file, criterion,
status, annotator, time, evidence, role``; adjudications keep the role ``adjudicator``), and the
run's drawing is written beside it as ``RUN_ID.svg`` (its extracted SVG; a run with none gets
its raw reply as ``RUN_ID.txt``, from which calibration extracts again). The folder is what
``regua calibrate --set DIR`` and ``POST /v1/calibrations`` read, so reviewed items become
calibration data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.calibration.labeltable import LABEL_TABLE, LabelRow, label_table_csv
from service.storage import Artifact, ReviewItem, ReviewRow, Run
from service.storage.blobs import BlobStore


@dataclass(frozen=True)
class ExportedLabels:
    """The rows of ``labels.csv`` and the files they name."""

    rows: tuple[LabelRow, ...]
    files: dict[str, bytes]


def _drawing(s: Session, blobs: BlobStore, run_id: str) -> tuple[str, bytes] | None:
    """The run's extracted SVG (``RUN.svg``) or, failing that, its raw reply (``RUN.txt``)."""
    for kind, suffix in (("extracted", "svg"), ("raw", "txt")):
        sha = s.scalar(
            select(Artifact.sha256)
            .where(Artifact.run_id == run_id, Artifact.kind == kind)
            .order_by(Artifact.id)
            .limit(1)
        )
        if sha is not None:
            return f"{run_id}.{suffix}", blobs.get(sha)
    return None


def review_labels(s: Session, blobs: BlobStore, task_ref: str) -> ExportedLabels:
    """Every review of ``task_ref``'s runs, oldest first, with the drawings they label."""
    found = s.execute(
        select(ReviewRow, ReviewItem.criterion, ReviewItem.run_id)
        .join(ReviewItem, ReviewRow.item_id == ReviewItem.id)
        .join(Run, Run.id == ReviewItem.run_id)
        .where(Run.task_ref == task_ref)
        .order_by(ReviewRow.id)
    ).all()
    files: dict[str, bytes] = {}
    names: dict[str, str | None] = {}
    rows: list[LabelRow] = []
    for review, criterion, run_id in found:
        if run_id not in names:
            drawing = _drawing(s, blobs, run_id)
            names[run_id] = None if drawing is None else drawing[0]
            if drawing is not None:
                files[drawing[0]] = drawing[1]
        name = names[run_id]
        if name is None:
            continue  # a run without its reply stored cannot be calibrated on
        rows.append(
            LabelRow(
                file=name,
                criterion=criterion,
                status=review.status,
                annotator=review.reviewer_name,
                time=review.created_at.isoformat() if review.created_at else "",
                evidence=review.note or "",
                role="adjudicator" if review.adjudication else "annotator",
            )
        )
    return ExportedLabels(tuple(rows), files)


def write_label_folder(exported: ExportedLabels, out: Path) -> Path:
    """Write ``labels.csv`` and the drawings into ``out``; returns the table's path."""
    out.mkdir(parents=True, exist_ok=True)
    for name, data in exported.files.items():
        (out / name).write_bytes(data)
    table = out / LABEL_TABLE
    with open(table, "w", encoding="utf-8", newline="") as fh:
        fh.write(label_table_csv(exported.rows))
    return table
