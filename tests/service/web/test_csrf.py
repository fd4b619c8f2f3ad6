"""CSRF: every state-changing form checks its origin and token; login cannot swap a session.

A page on another port of the same host (``http://127.0.0.1:OTHER``) or a sibling subdomain is
same-site, so ``SameSite=Strict`` cookies ride along with its forms: these tests post exactly
such forms, with the victim's session cookie, and check that nothing is stored.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from service.storage import ApiToken, ReviewRow, WebSession
from tests.helpers.httpclient import Http
from tests.helpers.web import Site, csrf_in, own_origin, web_login

FOREIGN = ("http://127.0.0.1:1", "http://evil.localhost", "null")


def _labels(site: Site) -> int:
    with site.ctx.db.read() as s:
        return int(s.scalar(select(func.count(ReviewRow.id))) or 0)


def _next_item(site: Site) -> str:
    body = site.client("reviewer").get("/v1/reviews/next").json()
    item_id: str = body["item"]["item_id"]
    return item_id


@pytest.mark.parametrize("origin", FOREIGN)
def test_review_post_from_a_foreign_origin_is_refused_and_stores_nothing(
    site: Site, origin: str
) -> None:
    """The reported attack: another origin auto-submits a label as the logged-in reviewer."""
    browser = site.client()
    csrf = web_login(browser, site.tokens["reviewer"])
    item = _next_item(site)
    form = {"status": "pass", "note": "forged", "csrf": csrf}  # even with the right token
    forged = browser.post(f"/review/{item}", data=form, headers={"Origin": origin})
    assert forged.status_code == 403 and "refused" in forged.text
    assert _labels(site) == 0  # nothing stored


def test_review_post_needs_the_sessions_csrf_token(site: Site) -> None:
    browser = site.client()
    csrf = web_login(browser, site.tokens["reviewer"])
    item = _next_item(site)
    for token in ("", "x" * 64, csrf[:-1]):
        r = browser.post(f"/review/{item}", data={"status": "pass", "csrf": token})
        assert r.status_code == 403 and "CSRF" in r.text, token
    no_origin = Http(base_url=site.url, cookies=browser.cookies, follow_redirects=True, timeout=120)
    site.clients.append(no_origin)  # no Origin and no Referer at all: refused too
    r = no_origin.post(f"/review/{item}", data={"status": "pass", "csrf": csrf})
    assert r.status_code == 403
    foreign_referer = no_origin.post(
        f"/review/{item}",
        data={"status": "pass", "csrf": csrf},
        headers={"Referer": "http://127.0.0.1:1/attack.html"},
    )
    assert foreign_referer.status_code == 403
    assert _labels(site) == 0
    ok = browser.post(
        f"/review/{item}", data={"status": "pass", "csrf": csrf}, follow_redirects=False
    )
    assert ok.status_code == 303 and _labels(site) == 1
    # a token is bound to its session: another reviewer's session cannot use it
    other = site.client()
    web_login(other, site.tokens["reviewer2"])
    item2 = _next_item_for(site, "reviewer2")
    r = other.post(f"/review/{item2}", data={"status": "fail", "csrf": csrf})
    assert r.status_code == 403 and _labels(site) == 1


def _next_item_for(site: Site, who: str) -> str:
    item_id: str = site.client(who).get("/v1/reviews/next").json()["item"]["item_id"]
    return item_id


def test_referer_of_our_own_page_is_accepted_when_no_origin_is_sent(site: Site) -> None:
    browser = site.client()
    csrf = web_login(browser, site.tokens["reviewer"])
    del browser.headers["Origin"]
    r = browser.post(
        f"/review/{_next_item(site)}",
        data={"status": "pass", "csrf": csrf},
        headers={"Referer": own_origin(browser) + "/review"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and _labels(site) == 1


def test_a_configured_proxy_origin_is_accepted(site: Site) -> None:
    """``REGUA_WEB_ORIGINS`` names the public origin of a TLS proxy in front of the service."""
    browser = site.client()
    csrf = web_login(browser, site.tokens["reviewer"], origin="https://regua.example")
    r = browser.post(
        f"/review/{_next_item(site)}",
        data={"status": "pass", "csrf": csrf},
        follow_redirects=False,
    )
    assert r.status_code == 303 and _labels(site) == 1


@pytest.mark.parametrize("origin", FOREIGN)
def test_login_from_a_foreign_origin_sets_no_session(site: Site, origin: str) -> None:
    """Login CSRF: a foreign page posting the attacker's token must not replace the victim's
    session (the victim would then label as, or submit to, the attacker's account)."""
    victim = site.client()
    web_login(victim, site.tokens["reviewer"])
    # the attacker's page even carries a valid form token (fetched with its own nonce)
    attacker = site.client()
    attacker.headers["Origin"] = own_origin(attacker)
    csrf = csrf_in(attacker.get("/login").text)
    victim.cookies.set("regua_login", attacker.cookies["regua_login"])
    forged = victim.post(
        "/login",
        data={"token": site.tokens["bob"], "next": "/runs", "csrf": csrf},
        headers={"Origin": origin},
        follow_redirects=False,
    )
    assert forged.status_code == 403
    assert not [c for c in forged.headers.get_list("set-cookie") if "regua_session" in c]
    page = victim.get("/ui")
    assert page.url.path == "/review" and "reviewer · reviewer" in page.text
    with site.ctx.db.read() as s:
        assert s.scalar(select(func.count(WebSession.id))) == 1  # only the victim's


def test_login_without_the_nonce_pair_sets_no_session(site: Site) -> None:
    browser = site.client()
    browser.headers["Origin"] = own_origin(browser)
    csrf = csrf_in(browser.get("/login").text)
    cases = (
        ({"token": site.tokens["bob"]}, True),  # no form token
        ({"token": site.tokens["bob"], "csrf": "x" * 43}, True),  # a made-up token
        ({"token": site.tokens["bob"], "csrf": csrf}, False),  # the nonce cookie is gone
    )
    for form, keep_cookie in cases:
        if not keep_cookie:
            browser.cookies.delete("regua_login")
        r = browser.post("/login", data=form, follow_redirects=False)
        assert r.status_code == 403, form
        assert "regua_session" not in r.headers.get("set-cookie", "")
    with site.ctx.db.read() as s:
        assert s.scalar(select(func.count(WebSession.id))) == 0


def test_logout_checks_origin_and_token_and_ends_the_session_server_side(site: Site) -> None:
    browser = site.client()
    csrf = web_login(browser, site.tokens["reviewer"])
    sid = browser.cookies["regua_session"]
    forged = browser.post("/logout", data={"csrf": csrf}, headers={"Origin": "http://127.0.0.1:1"})
    assert forged.status_code == 403
    assert browser.get("/ui").url.path == "/review"  # still logged in
    assert browser.post("/logout", data={}).status_code == 403
    out = browser.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    replay = site.client()  # the old cookie value, replayed, is dead
    replay.cookies.set("regua_session", sid)
    r = replay.get("/review", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_the_api_never_accepts_the_session_cookie(site: Site) -> None:
    """``/v1`` reads only the ``Authorization`` header, which no foreign page can make a browser
    send: a logged-in browser's cookie gives a cross-origin request no access to the API."""
    browser = site.client()
    web_login(browser, site.tokens["admin"])
    made = browser.post("/v1/tokens", json={"role": "admin", "name": "forged"})
    assert made.status_code == 401
    assert browser.get("/v1/runs").status_code == 401
    with site.ctx.db.read() as s:
        assert s.scalar(select(func.count(ApiToken.id)).where(ApiToken.name == "forged")) == 0


def test_over_https_the_cookies_are_host_prefixed_so_no_sibling_can_plant_one(site: Site) -> None:
    """Behind a TLS proxy (``X-Forwarded-Proto: https`` from a trusted address) the cookies are
    ``__Host-`` cookies: Secure, host-only, ``Path=/``. A browser refuses such a cookie from a
    sibling subdomain or plain HTTP, and the plain-named cookie a sibling could set is ignored."""
    https = {"X-Forwarded-Proto": "https", "Origin": "https://" + site.url.split("://")[1]}
    raw = Http(base_url=site.url, headers=https, timeout=60)
    site.clients.append(raw)
    form = raw.get("/login")
    nonce_cookie = form.headers["set-cookie"]
    assert nonce_cookie.startswith("__Host-regua_login=") and "Secure" in nonce_cookie
    nonce = nonce_cookie.split(";")[0].split("=", 1)[1]
    r = raw.post(
        "/login",
        data={"token": site.tokens["reviewer"], "csrf": csrf_in(form.text)},
        headers={"Cookie": f"__Host-regua_login={nonce}"},
        follow_redirects=False,
    )
    assert r.status_code == 303, r.text
    cookie = next(c for c in r.headers.get_list("set-cookie") if "regua_session=" in c)
    assert cookie.startswith("__Host-regua_session=")
    assert "Secure" in cookie and "Path=/" in cookie and "Domain" not in cookie
    sid = cookie.split(";")[0].split("=", 1)[1]
    good = raw.get("/review", headers={"Cookie": f"__Host-regua_session={sid}"})
    assert good.status_code == 200 and "reviewer · reviewer" in good.text
    planted = raw.get("/review", headers={"Cookie": f"regua_session={sid}"}, follow_redirects=False)
    assert planted.status_code == 303 and planted.headers["location"].startswith("/login")
