"""``/v1/health``: liveness, version and queue depth (no token needed)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

import regua
from service.api.deps import Ctx
from service.pipeline.executor import queue_depth

router = APIRouter(prefix="/v1", tags=["meta"])


class Health(BaseModel):
    """The service is up: its version, how full the queue is, whether runs are processed."""

    status: str
    version: str
    queue_depth: int
    queue_capacity: int
    executor: bool


@router.get("/health", response_model=Health)
def health(ctx: Ctx) -> Health:
    """Liveness, version and queue depth (no token needed)."""
    return Health(
        status="ok",
        version=regua.__version__,
        queue_depth=queue_depth(ctx.db),
        queue_capacity=ctx.settings.queue_capacity,
        executor=ctx.executor is not None,
    )
