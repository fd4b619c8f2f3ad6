"""``/v1/artifacts/{sha256}``: the bytes of one stored artifact, within the caller's role."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy import or_, select

from regua.errors import NotFoundError
from service.access.pools import hidden_run_ids, sees_hidden
from service.api.deps import Caller, Ctx
from service.api.headers import ARTIFACT_CSP
from service.storage import Artifact, Run

router = APIRouter(prefix="/v1/artifacts", tags=["artifacts"])

REVIEWER_KINDS = ("frame", "mask")
"""Artifact kinds a reviewer may fetch: what judges see, never the reply text or the model."""


@router.get(
    "/{sha256}",
    response_class=Response,
    responses={200: {"content": {"image/png": {}, "image/svg+xml": {}, "application/json": {}}}},
)
def get_artifact(sha256: str, ctx: Ctx, caller: Caller) -> Response:
    """The bytes of an artifact with its media type (``X-Content-SHA256`` repeats the address).

    Submitters read artifacts of their own runs; reviewers only frames and masks. Anything else
    answers 404 exactly as an unknown address does, so nobody can test whether some bytes (an
    SVG, a reply) were stored for another submitter. Artifacts of runs of a reserved task are
    for admins only (:mod:`service.access.pools`).
    """
    with ctx.db.read() as s:
        q = select(Artifact).where(Artifact.sha256 == sha256)
        if not sees_hidden(caller.role):
            hidden = Artifact.run_id.in_(hidden_run_ids(s))
            q = q.where(or_(Artifact.run_id.is_(None), ~hidden))
        if caller.role == "submitter":
            q = q.join(Run, Run.id == Artifact.run_id).where(Run.submitted_by == caller.token_id)
        elif caller.role == "reviewer":
            q = q.where(Artifact.kind.in_(REVIEWER_KINDS))
        art = s.scalars(q.limit(1)).first()
        if art is None:
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
            "Content-Security-Policy": ARTIFACT_CSP,
        },
    )
