"""Registering a task version into the task store (``task_versions``), frozen on first write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from regua.errors import TaskIntegrityError
from regua.records import field_dict
from service.storage import TaskRow, TaskVersionRow
from service.tasks_store.registry import StoredTaskRegistry
from tasks import TaskSpec


@dataclass(frozen=True)
class Registration:
    """What registering one task version did."""

    ref: str
    content_hash: str
    outcome: Literal["created", "unchanged"]
    """``created``: a new version; ``unchanged``: the same content was already registered."""
    bundled: bool = False


def changed_task(spec: TaskSpec, known: str, versions: list[int]) -> TaskIntegrityError:
    """The refusal of a changed task under a registered ``ID@VERSION``, naming the versions."""
    listed = ", ".join(f"{spec.id}@{v}" for v in versions) or spec.ref
    return TaskIntegrityError(
        f"{spec.ref} is already registered with content hash {known[:12]}; this content hashes "
        f"to {spec.content_hash()[:12]}. A changed task is a new version: registered versions "
        f"are {listed}; register it as {spec.id}@{max(versions, default=spec.version) + 1}."
    )


def register_task(registry: StoredTaskRegistry, spec: TaskSpec, source: str) -> Registration:
    """Store ``spec`` as a new task version, or confirm the same content is registered.

    Raises :class:`TaskIntegrityError` (HTTP 409) when the ref is registered — bundled, stored or
    used by a run — with other content.
    """
    digest = spec.content_hash()
    bundled = spec.ref in registry.bundled
    known = registry.known_hash(spec.ref)
    if known is None:
        known = _insert(registry, spec, source)
        registry.refresh()
    if known is None:
        return Registration(spec.ref, digest, "created")
    if known != digest:
        raise changed_task(spec, known, [s.version for s in registry.versions(spec.id)])
    return Registration(spec.ref, digest, "unchanged", bundled)


def _insert(registry: StoredTaskRegistry, spec: TaskSpec, source: str) -> str | None:
    """Insert the row; the hash already stored for the ref (a run's task, a race) or None."""
    db = registry.db
    try:
        with db.write() as s:
            used = s.scalar(select(TaskRow.content_hash).where(TaskRow.ref == spec.ref))
            if used is not None and used != spec.content_hash():
                return used
            s.add(
                TaskVersionRow(
                    **field_dict(spec, "ref", "version", "family"),
                    task_id=spec.id,
                    pool=spec.pool.value,
                    content_hash=spec.content_hash(),
                    spec=spec.to_wire(),
                    source=source[:500],
                )
            )
    except IntegrityError:  # another process registered the ref first
        with db.read() as s:
            return s.scalar(
                select(TaskVersionRow.content_hash).where(TaskVersionRow.ref == spec.ref)
            )
    return None
