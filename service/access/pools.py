"""Who may see a reserved task: the one place where task pools turn into visibility.

Pools are ``core``, ``rotating`` and ``reserved``. A reserved task that is not retired is
*hidden*: its prompt, title, family, criterion questions and drawings are shown only to admins
(the generation runner submits its runs with an admin token). Submitters and reviewers see its
reference and pool, never its prompt:

- the task listing and detail are cut down to ref, pool, mode and criterion ids
  (:func:`task_line`, :func:`task_detail`);
- only an admin creates work for it (:func:`require_may_create_work`, the one rule every route
  that creates work applies through :func:`check_task_access`: runs, batches, generations,
  experiments, pairwise comparisons, calibrations, re-scoring), so no submitter makes the
  service send its prompt anywhere;
- a run of it, whoever submitted it, is read by admins only (:func:`runs_readable_by`,
  :func:`may_read_run`): listings, run pages, reports and experiment reports of non-admins
  leave it out, so its criterion questions, family, reply and prompt hash reach no one else;
- its review items are offered only to admin reviewers, and only admins may label them
  (:func:`hidden_run_ids`, used by the queue's picking and labelling);
- its artifacts (frames, masks, replies) answer 404 to everyone but admins (artifact route).

Retiring a task (:func:`retire_task`, ``regua tasks retire`` or ``POST /v1/tasks/{ref}/retire``)
rotates it out of the bank; a retired reserved task is no longer hidden (its prompt may be
published) and no longer watched for leaks.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, select, true
from sqlalchemy.orm import Session

from checks.leaks import Watched
from regua.errors import PermissionDeniedError, UnknownTaskError
from service.access.tokens import Principal
from service.storage import Database, Run, TaskRetirement, TaskRow
from service.tasks_store.registry import StoredTaskRegistry
from tasks import TaskRegistry, TaskSpec
from tasks.model import Pool
from tasks.retirements import BUNDLED_RETIREMENTS, RETIRED_BY

SEES_HIDDEN = ("admin",)
"""Roles that see hidden (reserved, not retired) tasks in full."""


def sees_hidden(role: str) -> bool:
    """Whether ``role`` sees reserved tasks' prompts and drawings."""
    return role in SEES_HIDDEN


def retired_refs(session: Session) -> frozenset[str]:
    """References of every retired task version (by this installation, or bundled by regua)."""
    stored = session.scalars(select(TaskRetirement.task_ref))
    return frozenset(stored) | frozenset(BUNDLED_RETIREMENTS)


@dataclass(frozen=True)
class Retirement:
    """Who retired a task version, when (None: retired by regua, in its release) and why."""

    ref: str
    retired_by: str
    note: str
    retired_at: datetime | None = None


def retirements(session: Session) -> dict[str, Retirement]:
    """Every retired task version with who retired it and why (stored ones win over bundled)."""
    out = {ref: Retirement(ref, RETIRED_BY, note) for ref, note in BUNDLED_RETIREMENTS.items()}
    for row in session.scalars(select(TaskRetirement)):
        out[row.task_ref] = Retirement(row.task_ref, row.retired_by, row.note, row.retired_at)
    return out


def is_hidden(spec: TaskSpec, retired: Container[str]) -> bool:
    """A reserved task that is not retired."""
    return spec.pool is Pool.RESERVED and spec.ref not in retired


def hidden_refs(session: Session, extra: Iterable[TaskSpec] = ()) -> frozenset[str]:
    """Refs of hidden tasks among those stored (``tasks`` rows) and ``extra`` specs."""
    retired = retired_refs(session)
    stored = session.execute(select(TaskRow.ref, TaskRow.spec)).all()
    refs = {ref for ref, spec in stored if (spec or {}).get("pool") == Pool.RESERVED.value}
    refs.update(s.ref for s in extra if s.pool is Pool.RESERVED)
    return frozenset(refs - retired)


def hidden_run_ids(session: Session) -> Select[str]:
    """A sub-query of the ids of runs of hidden tasks (what non-admins never see)."""
    refs = sorted(hidden_refs(session))
    return select(Run.id).where(Run.task_ref.in_(refs))


def task_line(
    spec: TaskSpec,
    content_hash: str,
    *,
    role: str,
    retired: Container[str],
    origin: str = "bundled",
    retired_note: str | None = None,
) -> dict[str, Any]:
    """One task in a listing, as ``role`` may see it (title and family cut when hidden)."""
    hidden = is_hidden(spec, retired) and not sees_hidden(role)
    return {
        "origin": origin,
        "retired_note": retired_note if spec.ref in retired else None,
        "ref": spec.ref,
        "title": None if hidden else spec.title,
        "family": None if hidden else spec.family,
        "pool": spec.pool.value,
        "mode": spec.mode.value,
        "content_hash": content_hash,
        "criteria": [c.id for c in spec.criteria],
        "template": None if hidden else spec.template,
        "dimensions": {} if hidden else spec.dimensions,
        "retired": spec.ref in retired,
        "redacted": hidden,
    }


def task_detail(
    spec: TaskSpec, content_hash: str, *, role: str, retired: Container[str]
) -> dict[str, Any]:
    """One task version as ``role`` may see it: the full spec, or ref, pool, mode and ids."""
    hidden = is_hidden(spec, retired) and not sees_hidden(role)
    body: dict[str, Any]
    if hidden:
        body = {
            "id": spec.id,
            "version": spec.version,
            "pool": spec.pool.value,
            "mode": spec.mode.value,
            "criteria": [{"id": c.id, "kind": c.kind.value} for c in spec.criteria],
        }
    else:
        body = spec.to_wire()
    reserved = spec.pool is Pool.RESERVED
    return {
        "ref": spec.ref,
        "content_hash": content_hash,
        "spec": body,
        "retired": spec.ref in retired,
        "redacted": hidden,
        "canary": spec.canary_text() if reserved and sees_hidden(role) else None,
    }


def require_may_create_work(
    principal: Principal, specs: Iterable[TaskSpec], session: Session
) -> None:
    """The one access rule for work of a task: only admins create work of hidden tasks (403).

    Work is anything that sends the task's prompt somewhere or stores a run, a verdict or a
    comparison of it. The message names the ref only (refs and pools are public).
    """
    if sees_hidden(principal.role):
        return
    retired = retired_refs(session)
    for spec in specs:
        if is_hidden(spec, retired):
            raise PermissionDeniedError(
                f"{spec.ref} is a reserved task: only an admin token creates work for it "
                "(runs, generations, experiments); its runs are submitted by the generation "
                "runner with an admin token"
            )


def check_task_access(
    db: Database, registry: TaskRegistry, principal: Principal, refs: Iterable[str]
) -> None:
    """:func:`require_may_create_work` for task refs.

    A ref the registry does not know is left to the caller's own 404 (which names known tasks).
    """
    if sees_hidden(principal.role):
        return
    specs = []
    for ref in refs:
        try:
            specs.append(registry.get(ref))
        except UnknownTaskError:
            continue
    with db.read() as s:
        require_may_create_work(principal, specs, s)


def runs_readable_by(principal: Principal, session: Session) -> ColumnElement[bool]:
    """Which runs ``principal`` reads: every one (admins), else its own runs of visible tasks."""
    if sees_hidden(principal.role):
        return true()
    return and_(
        Run.submitted_by == principal.token_id,
        Run.task_ref.not_in(sorted(hidden_refs(session))),
    )


def may_read_run(principal: Principal, run: Run, session: Session) -> bool:
    """Whether ``principal`` reads ``run`` (see :func:`runs_readable_by`)."""
    if sees_hidden(principal.role):
        return True
    return run.submitted_by == principal.token_id and run.task_ref not in hidden_refs(session)


def watched_tasks(specs: Iterable[TaskSpec], retired: Container[str]) -> list[Watched]:
    """What the check stage watches replies for: every hidden task's canary and prompt."""
    return [Watched(s.ref, s.canary_text(), s.prompt) for s in specs if is_hidden(s, retired)]


def stored_specs(session: Session) -> list[TaskSpec]:
    """Every task version stored by the service (rows that no longer parse are skipped)."""
    out = []
    for (spec,) in session.execute(select(TaskRow.spec)):
        try:
            out.append(TaskSpec.model_validate(spec))
        except ValueError:
            continue
    return out


def retire_task(session: Session, ref: str, by: str, note: str = "") -> TaskRetirement:
    """Mark ``ref`` retired (idempotent: a retired task keeps its first retirement)."""
    row = session.scalar(select(TaskRetirement).where(TaskRetirement.task_ref == ref))
    if row is None:
        row = TaskRetirement(task_ref=ref, retired_by=by, note=note)
        session.add(row)
        session.flush()
    return row


def registry_retirements(registry: TaskRegistry) -> dict[str, Retirement]:
    """The retirements a command sees: its task store's, else regua's own (no database)."""
    if isinstance(registry, StoredTaskRegistry):
        with registry.db.read() as s:
            return retirements(s)
    return {ref: Retirement(ref, RETIRED_BY, note) for ref, note in BUNDLED_RETIREMENTS.items()}
