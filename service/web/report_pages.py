"""Server-rendered report pages: counts per task and model, and the full statistics page.

Mounted by the app factory beside :mod:`service.web.pages` (whose login, headers and error page
they share).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from regua.errors import InputError, PermissionDeniedError
from service.api.deps import Ctx
from service.api.headers import REPORT_HEADERS
from service.reports.scoped import report_config, report_page_html
from service.review import store
from service.web.auth import cookie_principal
from service.web.data import report_page
from service.web.pages import _error, _login_redirect, page
from service.web.pairwise_section import pairwise_sections

router = APIRouter(include_in_schema=False)


@router.get("/report")
def report(request: Request, ctx: Ctx) -> Response:
    """Counts per task version and model with the pending range, linking to the runs."""
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    try:
        with ctx.db.read() as s:
            tasks = report_page(s, who)
            audits = store.audit_stats(s) if who.is_admin else []
            agreement = store.agreement(s) if who.is_admin else []
        pairwise = (
            pairwise_sections(ctx.db, ctx.settings.pairwise_min_comparisons) if who.is_admin else []
        )
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    context = {
        "who": who,
        "nav": "report",
        "tasks": tasks,
        "audits": audits,
        "agreement": agreement,
        "pairwise": pairwise,
        "full_report": "/report/full",
    }
    return page(request, "report.html", context)


@router.get("/report/full")
def full_report(request: Request, ctx: Ctx) -> Response:
    """The full statistics page of ``service/reports`` (``/v1/reports/html``) for page users.

    The same report and scope rules as the API (:mod:`service.reports.scoped`), with the login
    cookie instead of a bearer header.
    """
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    try:
        cfg = report_config(
            "model", 20261129, 1000, "equal", False, request.query_params.get("by", "family")
        )
        html = report_page_html(ctx.db, who, [], [], cfg)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    except InputError as exc:
        return _error(request, who, exc, 422)
    return HTMLResponse(html, headers=REPORT_HEADERS)
