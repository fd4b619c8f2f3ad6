"""Server-rendered pages: login, review queue, runs, run evidence.

The report pages live in :mod:`service.web.report_pages`.

Mounted by the app factory (``service.server.app.ROUTERS`` lists
``service.web.pages:router``). Logging in with a bearer token opens a server-side session whose
random id is kept in an HttpOnly, SameSite=Strict cookie (:mod:`service.web.auth`); every form
post is checked for its origin and CSRF token before anything is stored. Every page is sent with
a strict Content-Security-Policy (no inline script, no inline style); scripts and styles are
static files.
Drawings are shown only as the sandbox's PNG frames; the untrusted SVG appears as escaped text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Mapping
from datetime import timedelta
from functools import lru_cache
from importlib import resources
from itertools import groupby
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from regua.errors import (
    AuthError,
    InputError,
    NotFoundError,
    PermissionDeniedError,
    ReguaError,
)
from regua.records import fields_of
from service.access.artifacts import readable_media_type
from service.access.sessions import close_session, open_session
from service.access.tokens import Principal, authenticate
from service.api.deps import Ctx, get_ctx
from service.api.headers import PAGE_HEADERS, artifact_headers
from service.api.text import EvaluationQ
from service.generation.revision_store import revision_view
from service.generation.store import generation_view
from service.review import store
from service.review.actions import label_item, next_item_for, reviewer_of
from service.review.payloads import ReviewerItem
from service.review.policy import queue_policy
from service.web.auth import (
    LOGIN_COOKIE,
    LOGIN_NONCE_TTL,
    SESSION_COOKIE,
    CsrfError,
    check_login_form,
    check_session_form,
    clear_cookie,
    cookie_login,
    cookie_principal,
    login_form_token,
    login_nonce,
    read_cookie,
    set_cookie,
)
from service.web.data import run_page, runs_list
from service.web.rows import RunFilters

router = APIRouter(include_in_schema=False)

SECURITY_HEADERS = PAGE_HEADERS
STATIC_FILES = {
    "regua.css": "text/css; charset=utf-8",
    "review.js": "text/javascript; charset=utf-8",
    "docs.js": "text/javascript; charset=utf-8",
}
CHOICES = (
    {"value": "pass", "text": "Pass", "key": "P"},
    {"value": "fail", "text": "Fail", "key": "F"},
    {"value": "uncertain", "text": "Uncertain", "key": "U"},
    {"value": "not_applicable", "text": "Not applicable", "key": "N"},
)
FLASH = {
    "resolved": "Saved. Item decided; the run's outcome was recomputed as a new evaluation.",
    "open": "Saved. The item waits for another independent review.",
    "disputed": "Saved. Reviewers disagree: the item goes to an adjudicating reviewer.",
}

Filters = Annotated[RunFilters, Depends()]
"""A page's run filters, from its query parameters (see :class:`~service.web.rows.RunFilters`)."""

_WEB = resources.files("service.web")
templates = Jinja2Templates(directory=str(_WEB / "templates"))


@lru_cache(maxsize=8)
def _static_bytes(name: str) -> bytes:
    return (_WEB / "static" / name).read_bytes()


def static_url(name: str) -> str:
    """Versioned URL of a static file (cache-busting by content hash)."""
    digest = hashlib.sha256(_static_bytes(name)).hexdigest()[:10]
    return f"/ui/static/{name}?v={digest}"


templates.env.globals["static"] = static_url


def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    """Render a template with the security headers (and the session's CSRF token for forms)."""
    login = getattr(request.state, "login", None)
    context = {"csrf": login.csrf if login is not None else "", **context}
    response = templates.TemplateResponse(request, name, context, status_code=status)
    response.headers.update(SECURITY_HEADERS)
    return response


def _local(target: str) -> bool:
    r"""Whether a redirect target stays on this site (no ``//host`` or ``/\host`` tricks)."""
    return target.startswith("/") and not target.startswith(("//", "/\\")) and "\\" not in target


def _login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)


def _error(request: Request, who: Principal | None, exc: ReguaError, status: int) -> HTMLResponse:
    return page(
        request, "error.html", {"who": who, "status": status, "message": str(exc)}, status=status
    )


@router.get("/ui/static/{name}")
def static_file(name: str) -> Response:
    """The page stylesheet and script (an allow-list; nothing else is served)."""
    return allowed_file(name, STATIC_FILES, _static_bytes, "static file")


def allowed_file(
    name: str, allowed: Mapping[str, str], read: Callable[[str], bytes], what: str
) -> Response:
    """The file ``name`` of an allow-list (name → media type), cacheable a day; else 404."""
    if name not in allowed:
        raise NotFoundError(f"no {what} {name!r}")
    return Response(
        read(name),
        media_type=allowed[name],
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/ui/artifacts/{sha256}")
def page_artifact(sha256: str, request: Request, ctx: Ctx) -> Response:
    """``GET /v1/artifacts/{sha256}`` for pages: same handler and role rules, cookie auth.

    Pages authenticate by cookie because ``<img>`` cannot send a bearer header. Reviewers get
    frames and masks only.
    """
    who = cookie_principal(request)
    if who is None:
        raise AuthError("log in first")
    with ctx.db.read() as s:
        media_type = readable_media_type(s, who, sha256)
    return Response(
        content=ctx.blobs.get(sha256), media_type=media_type, headers=artifact_headers(sha256)
    )


@router.get("/favicon.ico")
def favicon() -> Response:
    """No icon (avoids a 404 in every page's console)."""
    return Response(status_code=204)


@router.get("/")
def root() -> Response:
    """The site root leads to the pages."""
    return RedirectResponse("/ui", status_code=303)


@router.get("/ui")
def home(request: Request) -> Response:
    """Send each role to its page."""
    who = cookie_principal(request)
    if who is None:
        return RedirectResponse("/login", status_code=303)
    return RedirectResponse("/review" if who.role == "reviewer" else "/runs", status_code=303)


@router.get("/login")
def login_form(request: Request, next: str = "/ui") -> HTMLResponse:
    """The token form, with its CSRF token (the keyed hash of a nonce kept in a cookie)."""
    safe_next = next if _local(next) else "/ui"
    nonce, fresh = login_nonce(request)
    context = {"who": None, "next": safe_next, "csrf": login_form_token(request, nonce)}
    response = page(request, "login.html", context)
    if fresh:
        set_cookie(request, response, LOGIN_COOKIE, nonce, int(LOGIN_NONCE_TTL.total_seconds()))
    return response


@router.post("/login")
def login(
    request: Request,
    token: str = Form(...),
    next: str = Form("/ui"),
    csrf: str = Form(""),
) -> Response:
    """Check the form's origin and CSRF pair, then the token; open a server-side session.

    The session cookie holds a random id (HttpOnly, SameSite=Strict), never the token. A post
    from another origin or without the pair is refused (403) and sets no cookie.
    """
    try:
        check_login_form(request, csrf)
    except CsrfError as exc:
        return _error(request, None, exc, 403)
    db = get_ctx(request).db
    try:
        principal = authenticate(db, f"Bearer {token.strip()}")
    except AuthError:
        nonce = read_cookie(request, LOGIN_COOKIE) or ""
        ctx = {"who": None, "next": next, "flash": "Unknown token.", "flash_kind": "error"}
        ctx["csrf"] = login_form_token(request, nonce)
        return page(request, "login.html", ctx, status=401)
    ttl = get_ctx(request).settings.session_ttl_s
    close_session(db, read_cookie(request, SESSION_COOKIE))  # a new login replaces the old one
    sid = open_session(db, principal, timedelta(seconds=ttl))
    target = next if _local(next) else "/ui"
    response = RedirectResponse(target, status_code=303)
    set_cookie(request, response, SESSION_COOKIE, sid, ttl)
    clear_cookie(request, response, LOGIN_COOKIE)
    return response


@router.post("/logout")
def logout(request: Request, csrf: str = Form("")) -> Response:
    """End the session server-side (origin and CSRF checked) and forget its cookie."""
    login_state = cookie_login(request)
    if login_state is not None:
        try:
            check_session_form(request, login_state, csrf)
        except CsrfError as exc:
            return _error(request, login_state.principal, exc, 403)
        close_session(get_ctx(request).db, read_cookie(request, SESSION_COOKIE))
    response = RedirectResponse("/login", status_code=303)
    clear_cookie(request, response, SESSION_COOKIE)
    return response


def _on_pages(item: ReviewerItem) -> ReviewerItem:
    """The item with its frame and mask URLs on the pages' cookie-authenticated twin."""

    def paged(url: str) -> str:
        return url.replace("/v1/artifacts/", "/ui/artifacts/", 1)

    return item.model_copy(
        update={
            "frames": [f.model_copy(update={"url": paged(f.url)}) for f in item.frames],
            "masks": [m.model_copy(update={"url": paged(m.url)}) for m in item.masks],
        }
    )


@router.get("/review")
def review_page(
    request: Request,
    ctx: Ctx,
    saved: str | None = None,
    item: str | None = None,
    skip: str | None = None,
) -> Response:
    """The reviewer's next item to label (or ``?item=ID`` when it is available to them).

    The page shows the question, the frames, the masks on demand and the four choices.
    """
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    try:
        reviewer = reviewer_of(who)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    policy = queue_policy(ctx.settings, ctx.secret)
    data = next_item_for(ctx.db, policy, reviewer, item, [skip] if skip else [])
    base = {"who": who, "nav": "review", "flash": FLASH.get(saved or "")}
    done, left = data.progress.done, data.progress.left
    if data.item is None:
        return page(request, "review_empty.html", {**base, "done": done})
    shown = _on_pages(data.item)
    masks_by_time = [(t, list(g)) for t, g in groupby(shown.masks, key=lambda m: m.time_s)]
    context = {**base, "item": shown, "done": done, "left": left, "choices": CHOICES}
    return page(request, "review.html", {**context, "masks_by_time": masks_by_time})


@router.post("/review/{item_id}")
def review_submit(
    item_id: str,
    request: Request,
    ctx: Ctx,
    status: str = Form(...),
    note: str = Form(""),
    time_s: str = Form(""),
    csrf: str = Form(""),
) -> Response:
    """Save a label from the review form (origin and CSRF token checked), then the next item."""
    login_state = cookie_login(request)
    if login_state is None:
        return _login_redirect(request)
    who = login_state.principal
    try:
        check_session_form(request, login_state, csrf)
    except CsrfError as exc:
        return _error(request, who, exc, 403)
    try:
        t = float(time_s) if time_s.strip() else None
    except ValueError:
        t = -1.0
    if t is not None and not (math.isfinite(t) and t >= 0):
        return _error(request, who, InputError("frame time must be seconds ≥ 0"), 422)
    try:
        reviewer = reviewer_of(who)
        with ctx.db.write() as s:
            result = label_item(s, ctx.blobs, item_id, reviewer, status, note, t)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    except store.ReviewConflictError as exc:
        return _error(request, who, exc, 409)
    except ReguaError as exc:
        return _error(request, who, exc, 422 if not isinstance(exc, NotFoundError) else 404)
    return RedirectResponse(f"/review?saved={result.state}", status_code=303)


@router.get("/runs")
def runs_page(request: Request, ctx: Ctx, filter_by: Filters) -> Response:
    """Runs (own runs for submitters, all for admins), filterable as the report links them."""
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    filters = {k: v for k, v in fields_of(filter_by).items() if v}
    try:
        with ctx.db.read() as s:
            runs = runs_list(s, who, filters)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    context = {"who": who, "nav": "runs", "runs": runs, "filters": sorted(filters.items())}
    return page(request, "runs.html", context)


@router.get("/runs/{run_id}")
def run_detail(run_id: str, request: Request, ctx: Ctx, evaluation: EvaluationQ = None) -> Response:
    """A run's evidence: reply, SVG text, checks, frames, verdicts, versions, history.

    ``?evaluation=N`` shows an earlier evaluation's criteria and versions.
    """
    who = cookie_principal(request)
    if who is None:
        return _login_redirect(request)
    try:
        with ctx.db.read() as s:
            data = run_page(s, ctx.blobs, who, run_id, evaluation)
            generation = generation_view(s, run_id)
            revision = revision_view(s, run_id)
    except PermissionDeniedError as exc:
        return _error(request, who, exc, 403)
    except NotFoundError as exc:
        return _error(request, who, exc, 404)
    shown = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    context = {"who": who, "nav": "runs", "generation": generation, "revision": revision, **shown}
    return page(request, "run.html", context)
