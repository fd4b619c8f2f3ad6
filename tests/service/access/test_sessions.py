"""The login cookie is a server-side session that expires, never the bearer token."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from sqlalchemy import select, update

from service.access.sessions import csrf_of
from service.storage import WebSession, utcnow
from tests.helpers.web import Site, csrf_in, web_login


def test_login_cookie_is_a_random_session_id_stored_only_as_a_keyed_hash(site: Site) -> None:
    browser = site.client()
    browser.headers["Origin"] = site.url
    login = browser.get("/login")
    nonce_cookie = login.headers["set-cookie"]
    assert nonce_cookie.startswith("regua_login=") and "HttpOnly" in nonce_cookie
    csrf = web_login(browser, site.tokens["reviewer"])
    sid = browser.cookies["regua_session"]
    token = site.tokens["reviewer"]
    assert token not in sid and hashlib.sha256(token.encode()).hexdigest() not in sid
    assert len(sid) >= 40  # 32 random bytes
    with site.ctx.db.read() as s:
        rows = list(s.scalars(select(WebSession)))
    assert len(rows) == 1
    assert rows[0].session_hash not in (sid, hashlib.sha256(sid.encode()).hexdigest())
    assert rows[0].token_id == site.ids["reviewer"]
    lifetime = rows[0].expires_at - rows[0].created_at
    assert lifetime == timedelta(seconds=site.ctx.settings.session_ttl_s)
    # the page's CSRF token is derived from the session id with the secret (nothing stored)
    assert csrf == csrf_of(site.ctx.db, sid)
    assert web_login(site.client(), token) != csrf  # another session, another token


def test_session_cookie_max_age_follows_the_setting(site: Site) -> None:
    browser = site.client()
    browser.headers["Origin"] = site.url
    form = browser.get("/login").text
    r = browser.post(
        "/login",
        data={"token": site.tokens["alice"], "csrf": csrf_in(form)},
        follow_redirects=False,
    )
    cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("regua_session="))
    assert f"Max-Age={site.ctx.settings.session_ttl_s}" in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie


def test_an_expired_session_logs_the_browser_out(site: Site) -> None:
    browser = site.client()
    web_login(browser, site.tokens["alice"])
    assert browser.get("/runs").url.path == "/runs"
    with site.ctx.db.write() as s:  # the session's time is up (as after session_ttl_s)
        s.execute(update(WebSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert browser.get("/runs").url.path == "/login"


def test_a_raw_bearer_token_in_a_cookie_is_not_a_login(site: Site) -> None:
    """The old cookie held the token itself; neither old nor new cookie name accepts one."""
    browser = site.client()
    for name in ("regua_token", "regua_session"):
        browser.cookies.set(name, site.tokens["admin"])
        r = browser.get("/runs", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
        browser.cookies.clear()
