"""``/v1/exports``: a run bundle of a task's runs with their evidence (:mod:`service.bundles`).

Submitters export their own runs, admins every run; a reserved task's runs leave only for an
admin who sets ``include_reserved=true`` (otherwise 403, never a silently smaller bundle).
"""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import Response

from service.api.deps import Ctx, Submitter
from service.bundles.export import export_bundle

router = APIRouter(prefix="/v1", tags=["exports"])


@router.get(
    "/exports",
    response_class=Response,
    responses={200: {"content": {"application/gzip": {}}}},
)
def export(
    ctx: Ctx,
    caller: Submitter,
    task: list[str] = Query(..., description="ID@VERSION or ID (every version); repeatable"),
    model: list[str] = Query([], description="Only these model labels; repeatable"),
    include_reserved: bool = Query(False, description="Admins: a reserved task's runs too"),
) -> Response:
    """The bundle (``.tar.gz``) of a task's runs, for ``regua import bundle FILE``.

    It holds runs, evaluations, reviews, gate decisions and artifacts, with a manifest of
    sha256 sums and versions.
    """
    with ctx.db.read() as s:
        data, _ = export_bundle(
            s, ctx.blobs, caller, task, models=model, include_reserved=include_reserved
        )
    name = f"regua-{task[0].replace('@', '-')}.tar.gz".replace("/", "_")
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    return Response(data, media_type="application/gzip", headers=headers)
