"""The gallery page: one task's drawings side by side, and the animated PNG of a run's frames.

``/gallery`` lists the task versions the caller may see runs of; ``/gallery?task=REF`` shows the
grid (:mod:`service.web.gallery_data`), filtered by ``outcome`` and ``criterion`` (runs whose
current evaluation failed it). ``/ui/motion?frames=SHA.SHA…`` is the animated PNG of stored
frames (:mod:`service.web.motion`), read under the artifact rules of every frame. Mounted by the
app factory beside :mod:`service.web.pages`, whose login, headers and error page they share.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from regua.errors import AuthError, InputError, PermissionDeniedError
from service.api.deps import Ctx
from service.api.headers import artifact_headers
from service.web.auth import cookie_principal
from service.web.gallery_data import OUTCOMES, build_gallery, gallery_tasks
from service.web.motion import parse_frames, readable_motion
from service.web.pages import Filters, _error, _login_redirect, page

router = APIRouter(include_in_schema=False)


@router.get("/gallery")
def gallery(request: Request, ctx: Ctx, filter_by: Filters) -> Response:
    """The drawings of a task version, one column per model and one row per item or repeat."""
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    task, outcome, criterion = filter_by.task, filter_by.outcome, filter_by.criterion
    try:
        if outcome and outcome not in OUTCOMES:
            raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}")
        with ctx.db.read() as s:
            if not task:
                tasks = gallery_tasks(s, who)
                return page(request, "gallery.html", {"who": who, "nav": "gallery", "tasks": tasks})
            shown = build_gallery(s, who, task, ctx.secret, outcome or None, criterion or None)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    except InputError as exc:
        return _error(request, who, exc, 422)
    context = {"who": who, "nav": "gallery", "gallery": shown, "outcomes": OUTCOMES}
    return page(request, "gallery.html", context)


@router.get("/ui/motion")
def motion(request: Request, ctx: Ctx, frames: str = "") -> Response:
    """The animated PNG of these stored frames (each readable by the caller, else 404)."""
    who = cookie_principal(request)
    if who is None:
        raise AuthError("log in first")
    shas = parse_frames(frames)
    with ctx.db.read() as s:
        data = readable_motion(s, ctx.blobs, who, shas)
    headers = artifact_headers(shas[0])
    headers.pop("X-Content-SHA256", None)
    return Response(content=data, media_type="image/png", headers=headers)
