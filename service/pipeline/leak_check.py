"""Leak check at extraction: flag a reply carrying a reserved task's canary, prompt or 8-grams.

The check stage calls :func:`find_run_leaks` on the raw reply and stores what it returns with
:func:`record_leaks` in its own transaction (``leak_flags`` rows; :mod:`service.reports.leaks`
shows them to admins). What is watched: every reserved, non-retired task the service knows (its
stored task rows and the registry's specs, :attr:`Machinery.known_tasks`), by its canary
(:meth:`tasks.TaskSpec.canary_text`) and, for tasks other than the run's own, its prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from checks.leaks import Leak, find_leaks
from service.access.pools import retired_refs, stored_specs, watched_tasks
from service.storage import Database, LeakFlag
from tasks import TaskSpec


def find_run_leaks(
    db: Database, reply: bytes, own_ref: str, known: Sequence[TaskSpec]
) -> tuple[Leak, ...]:
    """The reserved tasks ``reply`` carries (pure matching in :func:`checks.leaks.find_leaks`)."""
    with db.read() as s:
        retired = retired_refs(s)
        specs = {spec.ref: spec for spec in (*stored_specs(s), *known)}
    watched = watched_tasks(specs.values(), retired)
    if not watched:
        return ()
    return find_leaks(reply.decode("utf-8", errors="replace"), watched, own_ref=own_ref)


def record_leaks(session: Session, run_id: str, leaks: Sequence[Leak]) -> None:
    """Store one flag per (reserved task, kind); a repeated check stores nothing twice."""
    query = select(LeakFlag.task_ref, LeakFlag.kind).where(LeakFlag.run_id == run_id)
    have = {(str(ref), str(kind)) for ref, kind in session.execute(query)}
    for leak in leaks:
        if (leak.ref, leak.kind) not in have:
            session.add(
                LeakFlag(
                    run_id=run_id,
                    task_ref=leak.ref,
                    kind=leak.kind,
                    overlap=leak.overlap,
                    share=leak.share,
                )
            )
            have.add((leak.ref, leak.kind))
