"""``/v1/tasks``: the frozen task versions this service judges."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel

from regua.errors import ConfigurationError
from service.api.deps import Caller, Ctx
from service.tasks_store import StoredTaskRegistry, register_task
from tasks.authoring import spec_from_data

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])


class TaskLine(BaseModel):
    """One registered task version."""

    ref: str
    title: str
    family: str
    pool: str
    mode: str
    content_hash: str
    criteria: list[str]
    template: str | None = None
    dimensions: dict[str, str] = {}


class TaskList(BaseModel):
    """Every registered task version."""

    tasks: list[TaskLine]


class TaskDetail(BaseModel):
    """One frozen task version: prompt, constraints, render profile, acceptance table."""

    ref: str
    content_hash: str
    spec: dict[str, Any]


@router.get("", response_model=TaskList)
def list_tasks(ctx: Ctx, caller: Caller) -> TaskList:
    """Every registered task version with its content hash."""
    del caller  # any role may read the tasks
    return TaskList(
        tasks=[
            TaskLine(
                ref=t.ref,
                title=t.title,
                family=t.family,
                pool=t.pool.value,
                mode=t.mode.value,
                content_hash=ctx.registry.content_hash(t.ref),
                criteria=[c.id for c in t.criteria],
                template=t.template,
                dimensions=t.dimensions,
            )
            for t in ctx.registry.all()
        ]
    )


@router.get("/{ref}", response_model=TaskDetail)
def get_task(ref: str, ctx: Ctx, caller: Caller) -> TaskDetail:
    """One frozen task version: prompt, constraints, render profile, acceptance table."""
    del caller
    spec = ctx.registry.get(ref)
    return TaskDetail(ref=spec.ref, content_hash=spec.content_hash(), spec=spec.to_wire())


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
    caller: Caller,
    response: Response,
    spec: dict[str, Any] = Body(..., description="a task spec (what GET returns under spec)"),
) -> Registered:
    """Register a task version (admin): 201 new, 200 same content, 409 changed content."""
    caller.require("admin")
    registry = ctx.registry
    if not isinstance(registry, StoredTaskRegistry):
        raise ConfigurationError("this service has no task store")
    task = spec_from_data(spec, None, "body")
    done = register_task(registry, task, f"api:token {caller.token_id}")
    if done.outcome == "unchanged":
        response.status_code = 200
    return Registered(ref=done.ref, content_hash=done.content_hash, outcome=done.outcome)
