"""Accepting submissions: admit (size, rate, capacity, share), then store runs + raw artifacts."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from regua.errors import InputError, TaskIntegrityError
from regua.records import field_dict
from service.pipeline.admission import Admission
from service.storage import Database, Run, TaskRow
from service.storage.blobs import BlobStore, NewArtifact, record_artifact
from tasks import TaskRegistry, TaskSpec

RAW_PROCEDURE = ("submit", "1")
StoredHook = Callable[[Session, Sequence[str]], None]
"""Called in the transaction that stores the runs, with their ids in order."""


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
        savepoint = s.begin_nested()
        try:
            s.add(row)
            s.flush()
        except IntegrityError:  # another transaction stored it first (concurrent first runs)
            savepoint.rollback()
            row = s.scalars(select(TaskRow).where(TaskRow.ref == spec.ref)).one()
        else:
            savepoint.commit()
    if row.content_hash != digest:
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
    admission: Admission,
    on_stored: StoredHook | None = None,
) -> list[str]:
    """Store every submission (all or none) and return their run ids.

    ``on_stored`` runs in the transaction that writes the runs, with their ids (a generation
    stores its record there, so a run never exists without it; the queue defers their jobs).

    Everything that can refuse the request is checked before a byte is written:
    :class:`UnknownTaskError` (404), :class:`BatchTooLargeError` (422), then the token's rate,
    the queue's capacity and the submitter's share (:class:`BackpressureError`, 429). The queue
    is checked again under the writer lock, where a request that lost a race to a concurrent one
    can still be refused after its (content-addressed, idempotent) blobs were written.
    """
    for index, item in enumerate(items):
        _check_storable(item, index)
    specs = [registry.get(item.task) for item in items]
    admission.before_writing(len(items), token_id)
    with db.read() as s:
        admission.check_queue(s, len(items), token_id)
    for item in items:  # bytes first, outside the writer lock
        blobs.put(item.output.encode("utf-8"))
    with db.write() as s:
        admission.check_queue(s, len(items), token_id)
        ids = _store(s, blobs, items, specs, token_id)
        if on_stored is not None:
            on_stored(s, ids)
        return ids


def _check_storable(item: Submission, index: int) -> None:
    """Refuse text that is not Unicode (lone surrogates) and params that are not JSON (NaN).

    The HTTP API refuses these already, naming the field; this guards every other caller.
    """
    texts = {"task": item.task, "model.label": item.model_label, "output": item.output}
    texts["model.provider"] = item.model_provider or ""
    try:
        texts["model.params"] = json.dumps(item.model_params, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise InputError(f"run {index}: model.params is not JSON ({exc})") from exc
    for name, text in texts.items():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(
                f"run {index}: {name} is not valid Unicode text (lone surrogate at character "
                f"{exc.start})"
            ) from exc


def _store(
    s: Session,
    blobs: BlobStore,
    items: Sequence[Submission],
    specs: Sequence[TaskSpec],
    token_id: int | None,
) -> list[str]:
    """Add the runs and their raw artifacts in ``s``; their ids in order."""
    batch_id = uuid.uuid4().hex if len(items) > 1 else None
    run_ids: list[str] = []
    tasks: dict[str, TaskRow] = {}
    for item, spec in zip(items, specs, strict=True):
        task_row = tasks.get(spec.ref) or ensure_task_row(s, spec)
        tasks[spec.ref] = task_row
        run = Run(
            id=uuid.uuid4().hex,
            task_ref=spec.ref,
            task_pk=task_row.id,
            **field_dict(item, "model_label", "model_provider", "model_params"),
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
            NewArtifact.text("raw", item.output, "reply.txt", RAW_PROCEDURE),
            fresh_run=True,
        )
        run.raw_artifact_id = raw.id
        run_ids.append(run.id)
    return run_ids
