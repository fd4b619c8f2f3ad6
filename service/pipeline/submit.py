"""Accepting submissions: validate, check capacity, store run + raw artifact in one transaction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from regua.errors import BackpressureError, TaskIntegrityError
from service.storage import Database, Run, TaskRow
from service.storage.blobs import BlobStore, NewArtifact, record_artifact
from tasks import TaskRegistry, TaskSpec

RAW_PROCEDURE = ("submit", "1")


@dataclass(frozen=True)
class Submission:
    """One model output to evaluate."""

    task: str
    model_label: str
    output: str
    model_provider: str | None = None
    model_params: dict[str, JsonValue] | None = field(default=None)
    panel: str | None = None
    """The judge panel asked for (checked by the service context); None: the default."""


def ensure_task_row(s: Session, spec: TaskSpec) -> TaskRow:
    """The stored row of a task version, created on first use; a changed spec is refused."""
    digest = spec.content_hash()
    row = s.scalar(select(TaskRow).where(TaskRow.ref == spec.ref))
    if row is None:
        row = TaskRow(
            ref=spec.ref,
            task_id=spec.id,
            version=spec.version,
            content_hash=digest,
            spec=spec.to_wire(),
        )
        s.add(row)
        s.flush()
    elif row.content_hash != digest:
        raise TaskIntegrityError(
            f"{spec.ref} is stored with hash {row.content_hash[:12]} but the registry has "
            f"{digest[:12]}; a changed task must be a new version"
        )
    return row


def submit(
    db: Database,
    blobs: BlobStore,
    items: Sequence[Submission],
    token_id: int | None,
    *,
    registry: TaskRegistry,
    capacity: int,
) -> list[str]:
    """Store every submission (all or none) and return their run ids.

    Raises :class:`UnknownTaskError` (404) before anything is stored, and
    :class:`BackpressureError` (429) when the queue cannot hold the whole batch.
    """
    specs = [registry.get(item.task) for item in items]
    for item in items:  # bytes first, outside the writer lock (content-addressed, idempotent)
        blobs.put(item.output.encode("utf-8"))
    batch_id = uuid.uuid4().hex if len(items) > 1 else None
    run_ids: list[str] = []
    with db.write() as s:
        depth = int(s.scalar(select(func.count(Run.id)).where(Run.status != "done")) or 0)
        if depth + len(items) > capacity:
            raise BackpressureError(
                f"queue full ({depth} of {capacity} runs waiting); retry later",
                retry_after_s=max(1, min(60, (depth + len(items) - capacity) // 4 + 1)),
            )
        tasks: dict[str, TaskRow] = {}
        for item, spec in zip(items, specs, strict=True):
            task_row = tasks[spec.ref] = tasks.get(spec.ref) or ensure_task_row(s, spec)
            run = Run(
                id=uuid.uuid4().hex,
                task_ref=spec.ref,
                task_pk=task_row.id,
                model_label=item.model_label,
                model_provider=item.model_provider,
                model_params=item.model_params,
                panel_id=item.panel,
                submitted_by=token_id,
                batch_id=batch_id,
                status="queued",
                claims=0,
            )
            s.add(run)
            s.flush()
            raw = record_artifact(
                s,
                blobs,
                run.id,
                NewArtifact(
                    kind="raw",
                    data=item.output.encode("utf-8"),
                    name="reply.txt",
                    procedure_id=RAW_PROCEDURE[0],
                    procedure_version=RAW_PROCEDURE[1],
                ),
                fresh_run=True,
            )
            run.raw_artifact_id = raw.id
            run_ids.append(run.id)
    return run_ids
