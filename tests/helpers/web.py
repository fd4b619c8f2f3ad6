"""Logging an HTTP client in to the web pages the way a browser does.

A browser opens ``/login`` (which sets the login nonce cookie and puts its CSRF token in the
form), posts the form with its own ``Origin``, and then sends the session's CSRF token with every
form it posts. :func:`web_login` does the same with an :class:`httpx.Client`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
from sqlalchemy import update

from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server.app import create_app
from service.storage import Run
from tests.helpers.httpclient import Http
from tests.helpers.review_runs import add_run
from tests.helpers.server import serve_in_thread

CSRF_INPUT = re.compile(r'<input type="hidden" name="csrf" value="([^"]*)">')


def csrf_in(html: str) -> str:
    """The CSRF token of the first form of a page (fails when the page has none)."""
    found = CSRF_INPUT.search(html)
    assert found is not None, "the page has no CSRF field"
    return found.group(1)


def own_origin(client: httpx.Client) -> str:
    """The origin of the service the client talks to (``http://127.0.0.1:PORT``)."""
    return str(client.base_url).rstrip("/")


def web_login(client: httpx.Client, token: str, *, origin: str | None = None) -> str:
    """Log ``client`` in with ``token`` through the login form; returns the session's CSRF token.

    From now on the client sends ``Origin`` (its own, unless ``origin``) with every request, as
    a browser does with form posts.
    """
    client.headers["Origin"] = origin or own_origin(client)
    form = client.get("/login")
    assert form.status_code == 200, form.text
    posted = client.post(
        "/login",
        data={"token": token, "next": "/ui", "csrf": csrf_in(form.text)},
        follow_redirects=False,
    )
    assert posted.status_code == 303, posted.text
    page = client.get("/ui")
    assert page.status_code == 200, page.text
    return csrf_in(page.text)


@dataclass
class Site:
    """A service context over seeded runs, its app on a live HTTP server, and a token per role."""

    ctx: ServiceContext
    url: str
    tokens: dict[str, str]
    ids: dict[str, int]
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, token: str | None = None) -> httpx.Client:
        """A fresh client of the site (with ``token`` as bearer when given)."""
        headers = {"Authorization": f"Bearer {self.tokens[token]}"} if token else {}
        http = Http(base_url=self.url, headers=headers, timeout=60, follow_redirects=True)
        self.clients.append(http)
        return http


@contextlib.contextmanager
def seeded_site(settings: Settings) -> Iterator[Site]:
    """:class:`Site` over ``settings``: tokens admin, reviewer, reviewer2, alice and bob
    (submitters); run ``runpending`` (R1 uncertain, submitted by alice) and ``runpassed``."""
    ctx = ServiceContext.open(settings)
    tokens: dict[str, str] = {}
    ids: dict[str, int] = {}
    for name, role in (
        ("admin", "admin"),
        ("reviewer", "reviewer"),
        ("reviewer2", "reviewer"),
        ("alice", "submitter"),
        ("bob", "submitter"),
    ):
        tokens[name], principal = create_token(ctx.db, role, name)
        ids[name] = principal.token_id
    add_run(ctx.db, ctx.blobs, "runpending", {"R1": "uncertain"}, outcome="pending")
    add_run(ctx.db, ctx.blobs, "runpassed", {}, outcome="pass")
    with ctx.db.write() as s:
        s.execute(update(Run).where(Run.id == "runpending").values(submitted_by=ids["alice"]))
    try:
        with serve_in_thread(create_app(ctx)) as url:
            site = Site(ctx, url, tokens, ids)
            yield site
            for http in site.clients:
                http.close()
    finally:
        ctx.close()
