"""Logging an HTTP client in to the web pages the way a browser does.

A browser opens ``/login`` (which sets the login nonce cookie and puts its CSRF token in the
form), posts the form with its own ``Origin``, and then sends the session's CSRF token with every
form it posts. :func:`web_login` does the same with an :class:`httpx.Client`.
"""

from __future__ import annotations

import re

import httpx

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
