"""Leak check at extraction: flag a reply carrying a reserved task's canary, prompt or 8-grams.

The check stage reads what is watched with :func:`watched_now` (in the session that reads the
run's raw reply row), matches the raw reply with :func:`match_leaks` and stores what it finds with
:func:`record_leaks` in its own transaction (``leak_flags`` rows; :mod:`service.reports.leaks`
shows them to admins). What is watched: every reserved, non-retired task the service knows (its
stored task rows and the registry's specs, :attr:`Machinery.known_tasks`), by its canary
(:meth:`tasks.TaskSpec.canary_text`) and, for tasks other than the run's own, its prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from checks.leaks import Leak, Watched, find_leaks
from regua.records import field_dict
from service.access.pools import retired_refs, watched_tasks
from service.storage import Database, LeakFlag, TaskRow
from tasks import TaskSpec


def watched_now(db: Database, session: Session, known: Sequence[TaskSpec]) -> list[Watched]:
    """The reserved, non-retired tasks a reply is checked against, read in ``session``."""
    retired = retired_refs(session)
    specs = {spec.ref: spec for spec in (*_stored(db, session), *known)}
    return watched_tasks(specs.values(), retired)


def match_leaks(reply: bytes, watched: Sequence[Watched], own_ref: str) -> tuple[Leak, ...]:
    """The tasks of ``watched`` that ``reply`` carries."""
    if not watched:
        return ()
    return find_leaks(reply.decode("utf-8", errors="replace"), watched, own_ref=own_ref)


_PARSED: dict[tuple[str, int, str], TaskSpec | None] = {}
"""Stored task rows parsed before, by (database, row id, content hash); None: did not parse."""
_PARSED_CAP = 4096
_PARSED_LOCK = threading.Lock()


def _stored(db: Database, s: Session) -> list[TaskSpec]:
    """Every stored task version (:func:`stored_specs`), each row parsed once per process."""
    keys = [
        (db.url, int(i), str(h)) for i, h in s.execute(select(TaskRow.id, TaskRow.content_hash))
    ]
    with _PARSED_LOCK:
        missing = [k for k in keys if k not in _PARSED]
    if missing:
        parsed: dict[tuple[str, int, str], TaskSpec | None] = {k: None for k in missing}
        query = select(TaskRow.id, TaskRow.content_hash, TaskRow.spec)
        for i, h, spec in s.execute(query.where(TaskRow.id.in_([k[1] for k in missing]))):
            try:
                parsed[(db.url, int(i), str(h))] = TaskSpec.model_validate(spec)
            except ValueError:
                continue
        with _PARSED_LOCK:
            if len(_PARSED) + len(parsed) > _PARSED_CAP:
                _PARSED.clear()
            _PARSED.update(parsed)
    with _PARSED_LOCK:
        found = [_PARSED.get(k) for k in keys]
    return [spec for spec in found if spec is not None]


def record_leaks(session: Session, run_id: str, leaks: Sequence[Leak]) -> None:
    """Store one flag per (reserved task, kind); a repeated check stores nothing twice."""
    if not leaks:
        return
    query = select(LeakFlag.task_ref, LeakFlag.kind).where(LeakFlag.run_id == run_id)
    have = {(str(ref), str(kind)) for ref, kind in session.execute(query)}
    for leak in leaks:
        if (leak.ref, leak.kind) not in have:
            session.add(
                LeakFlag(
                    run_id=run_id,
                    task_ref=leak.ref,
                    **field_dict(leak, "kind", "overlap", "share"),
                )
            )
            have.add((leak.ref, leak.kind))
