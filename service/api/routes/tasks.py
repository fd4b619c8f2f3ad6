"""``/v1/tasks``: the frozen task versions this service judges."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from service.api.deps import Caller, Ctx

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
