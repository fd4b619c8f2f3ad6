"""``/v1/artifacts``, ``/v1/tasks``, ``/v1/tokens`` and ``/v1/health``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy import select

import regua
from regua.errors import NotFoundError, PermissionDeniedError
from service.api.deps import Caller, Ctx
from service.api.schemas import TokenCreated, TokenRequest
from service.auth import create_token
from service.db import Artifact, Run
from service.executor import queue_depth

router = APIRouter(prefix="/v1")

#: Artifact kinds a reviewer may fetch: what judges see, never the reply text or the model.
REVIEWER_KINDS = ("frame", "mask")


@router.get("/artifacts/{sha256}", tags=["artifacts"])
def get_artifact(sha256: str, ctx: Ctx, caller: Caller) -> Response:
    """The bytes of an artifact with its media type (``X-Content-SHA256`` repeats the address).

    Submitters read artifacts of their own runs; reviewers only frames and masks."""
    with ctx.db.read() as s:
        q = select(Artifact).where(Artifact.sha256 == sha256)
        if caller.role == "submitter":
            q = q.join(Run, Run.id == Artifact.run_id).where(Run.submitted_by == caller.token_id)
        elif caller.role == "reviewer":
            q = q.where(Artifact.kind.in_(REVIEWER_KINDS))
        art = s.scalars(q.limit(1)).first()
        if art is None:
            exists = s.scalar(select(Artifact.id).where(Artifact.sha256 == sha256).limit(1))
            if exists is not None and not caller.is_admin:
                raise PermissionDeniedError("this artifact is outside your role")
            raise NotFoundError(f"no artifact {sha256!r}")
        media_type = art.media_type
    data = ctx.blobs.get(sha256)
    return Response(
        content=data,
        media_type=media_type,
        headers={
            "X-Content-SHA256": sha256,
            "Cache-Control": "private, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        },
    )


@router.get("/tasks", tags=["tasks"])
def list_tasks(ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """Every registered task version with its content hash."""
    del caller
    return {
        "tasks": [
            {
                "ref": t.ref,
                "title": t.title,
                "family": t.family,
                "pool": t.pool.value,
                "mode": t.mode.value,
                "content_hash": ctx.registry.content_hash(t.ref),
                "criteria": [c.id for c in t.criteria],
            }
            for t in ctx.registry.all()
        ]
    }


@router.get("/tasks/{ref}", tags=["tasks"])
def get_task(ref: str, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """One frozen task version: prompt, constraints, render profile, acceptance table."""
    del caller
    spec = ctx.registry.get(ref)
    return {"ref": spec.ref, "content_hash": spec.content_hash(), "spec": spec.to_wire()}


@router.post("/tokens", tags=["tokens"], status_code=201, response_model=TokenCreated)
def new_token(body: TokenRequest, ctx: Ctx, caller: Caller) -> TokenCreated:
    """Create a bearer token (admin only); the secret is returned once and stored hashed."""
    caller.require("admin")
    secret, principal = create_token(ctx.db, body.role, body.name)
    return TokenCreated(
        token=secret, role=principal.role, name=principal.name, id=principal.token_id
    )


@router.get("/health", tags=["meta"])
def health(ctx: Ctx) -> dict[str, Any]:
    """Liveness, version and queue depth (no token needed)."""
    return {
        "status": "ok",
        "version": regua.__version__,
        "queue_depth": queue_depth(ctx.db),
        "queue_capacity": ctx.settings.queue_capacity,
        "executor": ctx.executor is not None,
    }
