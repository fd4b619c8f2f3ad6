"""``/report/experiments/{id}``: an experiment's report page for people logged in to the pages.

The same page and read rule as ``GET /v1/experiments/{id}/report.html``, with the login
cookie instead of a bearer header.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from service.api.deps import Ctx
from service.api.headers import REPORT_HEADERS
from service.experiments.exports import experiment_page_html
from service.web.auth import cookie_principal

router = APIRouter(include_in_schema=False)


@router.get("/report/experiments/{experiment_id}")
def experiment_report_page(experiment_id: str, request: Request, ctx: Ctx) -> Response:
    """The experiment's paired report with its charts (login first without a session)."""
    who = cookie_principal(request)
    if who is None:
        target = quote(request.url.path, safe="")
        return RedirectResponse(f"/login?next={target}", status_code=303)
    return HTMLResponse(experiment_page_html(ctx, experiment_id, who), headers=REPORT_HEADERS)
