"""``/tasks/proposals``: the page where a person accepts or rejects model-proposed variants.

Admins only (an accepted proposal becomes a registered task version). Every form post is
checked for its origin and CSRF token before anything is stored, like the review page.
"""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from regua.errors import (
    ImmutableRecordError,
    InputError,
    NotFoundError,
    PermissionDeniedError,
    ReguaError,
    TaskIntegrityError,
)
from service.access.tokens import Principal
from service.api.deps import Ctx
from service.api.text import RowId
from service.generation.proposals import task_store
from service.tasks_store.proposals import (
    STATES,
    Decider,
    State,
    accept_proposal,
    list_proposals,
    reject_proposal,
)
from service.web.auth import CsrfError, check_session_form, cookie_login, cookie_principal
from service.web.pages import _error, _login_redirect, page

router = APIRouter(include_in_schema=False)
FLASH = {
    "accepted": "Accepted: the task version is registered (frozen).",
    "rejected": "Rejected: nothing was registered.",
}
ONLY_ADMINS = PermissionDeniedError("task proposals are for admins (they become task versions)")


def _status(exc: ReguaError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ImmutableRecordError | TaskIntegrityError):
        return 409
    return 422 if isinstance(exc, InputError) else 500


@router.get("/tasks/proposals")
def proposals_page(
    request: Request, ctx: Ctx, state: str = "proposed", saved: str | None = None
) -> Response:
    """Proposals of one state (default: waiting for a decision), with accept / reject forms."""
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    if not who.is_admin:
        return _error(request, who, ONLY_ADMINS, 403)
    chosen: State | None = next((s for s in STATES if s == state), None)
    if chosen is None and state != "all":
        return _error(request, who, InputError(f"state must be one of {STATES} or all"), 422)
    found = list_proposals(ctx.db, state=chosen)
    context = {
        "who": who,
        "nav": "proposals",
        "proposals": found,
        "state": state,
        "states": [*STATES, "all"],
        "flash": FLASH.get(saved or ""),
    }
    return page(request, "proposals.html", context)


def _decide(
    request: Request, ctx: Ctx, proposal_id: int, accept: bool, reason: str, csrf: str
) -> Response:
    login = cookie_login(request)
    if login is None:
        return _login_redirect(request)
    who: Principal = login.principal
    try:
        check_session_form(request, login, csrf)
    except CsrfError as exc:
        return _error(request, who, exc, 403)
    if not who.is_admin:
        return _error(request, who, ONLY_ADMINS, 403)
    decider = Decider(who.token_id, who.name)
    try:
        if accept:
            accept_proposal(task_store(ctx), proposal_id, decider, reason)
        else:
            reject_proposal(ctx.db, proposal_id, decider, reason)
    except ReguaError as exc:
        return _error(request, who, exc, _status(exc))
    done = "accepted" if accept else "rejected"
    return RedirectResponse(f"/tasks/proposals?saved={done}", status_code=303)


@router.post("/tasks/proposals/{proposal_id}/accept")
def accept_form(
    proposal_id: RowId, request: Request, ctx: Ctx, reason: str = Form(""), csrf: str = Form("")
) -> Response:
    """Accept from the page: register the task version, record the decision."""
    return _decide(request, ctx, proposal_id, True, reason, csrf)


@router.post("/tasks/proposals/{proposal_id}/reject")
def reject_form(
    proposal_id: RowId, request: Request, ctx: Ctx, reason: str = Form(""), csrf: str = Form("")
) -> Response:
    """Reject from the page: record the decision, register nothing."""
    return _decide(request, ctx, proposal_id, False, reason, csrf)
