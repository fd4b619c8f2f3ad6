"""``/v1/artifacts/{sha256}``: the bytes of one stored artifact, within the caller's role."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from service.access.artifacts import readable_media_type
from service.api.deps import Caller, Ctx
from service.api.headers import artifact_headers

router = APIRouter(prefix="/v1/artifacts", tags=["artifacts"])


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
        media_type = readable_media_type(s, caller, sha256)
    return Response(
        content=ctx.blobs.get(sha256), media_type=media_type, headers=artifact_headers(sha256)
    )
