"""Who is calling the pages, and whether a form post may change anything.

The login cookie holds a server-side session id (:mod:`service.access.sessions`), never the
bearer token. Every state-changing form (``/login``, ``/logout``, ``/review/{item}``) must pass
two checks before anything is read or stored:

* **origin**: the request's ``Origin`` (or, when a browser sent none, its ``Referer``) names this
  service — the origin the request was addressed to, or one of ``REGUA_WEB_ORIGINS``. A page on
  another port of the same host or on a sibling subdomain is *same-site*, so ``SameSite=Strict``
  lets its forms carry our cookie; this check refuses them. A post naming no origin at all is
  refused too.
* **token**: the form carries the session's CSRF token; the login form, shown before any session
  exists, carries the keyed hash of a random nonce kept in its own cookie (signed double submit).

Over HTTPS (directly, or behind a proxy uvicorn trusts for ``X-Forwarded-Proto``) the cookies are
named ``__Host-…`` and marked Secure: browsers then refuse such a cookie set by a sibling
subdomain or over plain HTTP, so a same-site page cannot plant its own session in the victim's
browser ("cookie tossing"). Over plain HTTP there is no such guard (see ``docs/security.md``).
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import Response

from regua.errors import PermissionDeniedError
from service.access.sessions import (
    Login,
    login_csrf,
    new_login_nonce,
    same_token,
    session_login,
)
from service.access.tokens import Principal
from service.api.deps import get_ctx

SESSION_COOKIE = "regua_session"
LOGIN_COOKIE = "regua_login"
LOGIN_NONCE_TTL = timedelta(hours=1)


class CsrfError(PermissionDeniedError):
    """A form post that does not come from this service's own pages (403, nothing changed)."""


def _origin_of_url(url: str) -> str | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def own_origins(request: Request) -> set[str]:
    """The origins this service answers as: the one addressed, plus ``REGUA_WEB_ORIGINS``."""
    host = request.headers.get("host", "")
    found = {f"{request.url.scheme}://{host}".lower()} if host else set()
    for extra in get_ctx(request).settings.web_origins:
        origin = _origin_of_url(extra.strip())
        if origin:
            found.add(origin)
    return found


def sender_origin(request: Request) -> str | None:
    """The origin of the page that sent this request (``Origin``, else ``Referer``)."""
    origin = request.headers.get("origin")
    if origin is not None:
        return None if origin.strip().lower() == "null" else _origin_of_url(origin.strip())
    referer = request.headers.get("referer")
    return _origin_of_url(referer) if referer else None


def check_origin(request: Request) -> None:
    """Refuse (403) a state-changing request not sent by one of this service's own pages."""
    if (request.headers.get("origin") or "").strip().lower() == "null":
        raise CsrfError("form posts from an opaque origin (Origin: null) are refused")
    sender = sender_origin(request)
    if sender is None:
        raise CsrfError("form posts naming no Origin or Referer are refused")
    if sender not in own_origins(request):
        raise CsrfError(f"form posts from {sender} are refused (cross-origin request)")


def cookie_name(request: Request, base: str) -> str:
    """The cookie's name on this request: ``__Host-`` + ``base`` over HTTPS, else ``base``."""
    return f"__Host-{base}" if request.url.scheme == "https" else base


def read_cookie(request: Request, base: str) -> str | None:
    """The value of cookie ``base`` (under its ``__Host-`` name over HTTPS)."""
    return request.cookies.get(cookie_name(request, base))


def cookie_login(request: Request) -> Login | None:
    """The live session of the request's cookie (None without one); kept on ``request.state``."""
    cached: Login | None = getattr(request.state, "login", None)
    if cached is not None:
        return cached
    found = session_login(get_ctx(request).db, read_cookie(request, SESSION_COOKIE))
    request.state.login = found
    return found


def cookie_principal(request: Request) -> Principal | None:
    """The caller of a page (None without a live session)."""
    login = cookie_login(request)
    return login.principal if login is not None else None


def check_session_form(request: Request, login: Login, csrf: str) -> None:
    """Refuse (403) a logged-in form post from another origin or without the session's token."""
    check_origin(request)
    if not same_token(login.csrf, csrf):
        raise CsrfError("the form's CSRF token is missing or wrong; reload the page")


def login_nonce(request: Request) -> tuple[str, bool]:
    """The login form's nonce from its cookie, or a new one (and whether it is new)."""
    nonce = read_cookie(request, LOGIN_COOKIE)
    if nonce and 16 <= len(nonce) <= 64:
        return nonce, False
    return new_login_nonce(), True


def login_form_token(request: Request, nonce: str) -> str:
    """The CSRF token the login form carries for ``nonce``."""
    return login_csrf(get_ctx(request).db, nonce)


def check_login_form(request: Request, csrf: str) -> None:
    """Refuse (403) a login post from another origin or without the nonce pair.

    Stops login CSRF: a foreign page cannot log the victim's browser in as the attacker.
    """
    check_origin(request)
    nonce = read_cookie(request, LOGIN_COOKIE)
    if not nonce or not same_token(login_form_token(request, nonce), csrf):
        raise CsrfError("the login form's CSRF token is missing or wrong; reload the page")


def set_cookie(request: Request, response: Response, base: str, value: str, ttl: int) -> None:
    """Set an HttpOnly, SameSite=Strict cookie for this host (``__Host-``, Secure over HTTPS)."""
    response.set_cookie(
        cookie_name(request, base),
        value,
        max_age=ttl,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


def clear_cookie(request: Request, response: Response, base: str) -> None:
    """Tell the browser to forget cookie ``base`` (with the attributes it was set with)."""
    response.delete_cookie(
        cookie_name(request, base),
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
