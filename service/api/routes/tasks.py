"""``/v1/tasks``: the frozen task versions this service judges."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel, Field

from regua.errors import ConfigurationError
from service.access.pools import (
    retire_task,
    retirements,
    task_detail,
    task_line,
)
from service.api.deps import Admin, Caller, Ctx
from service.api.text import Text
from service.storage import iso
from service.tasks_store import StoredTaskRegistry, register_task
from service.tasks_store.configured import origin_of
from tasks.authoring import spec_from_data

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])


class TaskLine(BaseModel):
    """One registered task version (title and family are null when ``redacted``)."""

    ref: str
    origin: str = "bundled"
    """``bundled`` (shipped with regua) or ``added`` (registered into this task store)."""
    title: str | None
    family: str | None
    pool: str
    mode: str
    content_hash: str
    criteria: list[str]
    template: str | None = None
    dimensions: dict[str, str] = {}
    retired: bool = False
    retired_note: str | None = None
    """Why it was retired (a retired version stays readable; its runs keep their results)."""
    redacted: bool = False


class TaskList(BaseModel):
    """Every registered task version."""

    tasks: list[TaskLine]


class TaskDetail(BaseModel):
    """One frozen task version: prompt, constraints, render profile, acceptance table."""

    ref: str
    content_hash: str
    spec: dict[str, Any]
    origin: str = "bundled"
    retired: bool = False
    retired_note: str | None = None
    redacted: bool = False
    """True when the spec is cut to ref, pool, mode and criterion ids (a reserved task)."""
    canary: str | None = None
    """A reserved task's canary (admins only)."""


class Retired(BaseModel):
    """A retired task version."""

    ref: str
    retired_at: str
    retired_by: str
    note: str


class RetireBody(BaseModel):
    """Why a task version is retired (optional)."""

    note: Text = Field("", max_length=4000)


@router.get("", response_model=TaskList)
def list_tasks(ctx: Ctx, caller: Caller) -> TaskList:
    """Every registered task version with its content hash (any role; reserved ones redacted)."""
    with ctx.db.read() as s:
        notes = retirements(s)
    lines = [
        task_line(
            t,
            ctx.registry.content_hash(t.ref),
            role=caller.role,
            retired=notes,
            origin=origin_of(ctx.registry, t.ref),
            retired_note=notes[t.ref].note if t.ref in notes else None,
        )
        for t in ctx.registry.all()
    ]
    return TaskList.model_validate({"tasks": lines})


@router.get("/{ref}", response_model=TaskDetail)
def get_task(ref: str, ctx: Ctx, caller: Caller) -> TaskDetail:
    """One frozen task version: prompt, constraints, render profile, acceptance table.

    A reserved task that is not retired shows only its ref, pool, mode and criterion ids to
    submitters and reviewers (``redacted``).
    """
    spec = ctx.registry.get(ref)
    with ctx.db.read() as s:
        notes = retirements(s)
    view = task_detail(spec, spec.content_hash(), role=caller.role, retired=notes)
    note = notes[spec.ref].note if spec.ref in notes else None
    origin = origin_of(ctx.registry, spec.ref)
    return TaskDetail.model_validate({**view, "origin": origin, "retired_note": note})


class Registered(BaseModel):
    """What ``POST /v1/tasks`` did: ``created`` (201) or ``unchanged`` (200, the same content)."""

    ref: str
    content_hash: str
    outcome: str


@router.post(
    "",
    response_model=Registered,
    status_code=201,
    responses={200: {"description": "the same content was already registered (no-op)"}},
)
def add_task(
    ctx: Ctx,
    caller: Admin,
    response: Response,
    spec: dict[str, Any] = Body(..., description="a task spec (what GET returns under spec)"),
) -> Registered:
    """Register a task version (admin): 201 new, 200 same content, 409 changed content."""
    registry = ctx.registry
    if not isinstance(registry, StoredTaskRegistry):
        raise ConfigurationError("this service has no task store")
    task = spec_from_data(spec, None, "body")
    done = register_task(registry, task, f"api:token {caller.token_id}")
    if done.outcome == "unchanged":
        response.status_code = 200
    return Registered(ref=done.ref, content_hash=done.content_hash, outcome=done.outcome)


@router.post("/{ref}/retire", response_model=Retired)
def retire(ref: str, ctx: Ctx, caller: Admin, body: RetireBody | None = None) -> Retired:
    """Retire a task version (admin): rotated out, and a reserved prompt may be published.

    Idempotent: retiring a retired task answers its first retirement. 404 for an unknown task.
    """
    spec = ctx.registry.get(ref)
    with ctx.db.write() as s:
        row = retire_task(s, spec.ref, caller.name, body.note if body else "")
        out = Retired(
            ref=row.task_ref,
            retired_at=iso(row.retired_at) or "",
            retired_by=row.retired_by,
            note=row.note,
        )
    return out
