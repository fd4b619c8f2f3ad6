"""The API docs page works offline under the pages' CSP; HTML reports are never framed or cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from service.api.headers import PAGE_CSP
from tests.helpers.browser import patient
from tests.helpers.page_browser import launch_chromium
from tests.helpers.web import Site, web_login

CHROMIUM = Path("/usr/bin/chromium")


def _framing_and_cache(headers: httpx.Headers) -> None:
    h = headers
    assert "frame-ancestors 'none'" in h["content-security-policy"]
    assert h["x-frame-options"] == "DENY"
    assert h["cache-control"] == "no-store"
    assert h["x-content-type-options"] == "nosniff"


def test_docs_page_has_the_pages_headers_and_loads_nothing_from_elsewhere(site: Site) -> None:
    r = site.client().get("/v1/docs")
    assert r.status_code == 200
    assert r.headers["content-security-policy"] == PAGE_CSP
    _framing_and_cache(r.headers)
    assert "cdn" not in r.text and "https://" not in r.text and "<script>" not in r.text
    js = site.client().get("/v1/docs/assets/swagger-ui-bundle.js")
    assert (
        js.status_code == 200
        and len(js.content) > 500_000
        and "javascript" in js.headers["content-type"]
    )
    css = site.client().get("/v1/docs/assets/swagger-ui.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    for name in ("favicon-32x32.png", "..%2F__init__.py", "main.py"):
        assert site.client().get(f"/v1/docs/assets/{name}").status_code == 404


def test_report_pages_are_never_framed_or_cached(site: Site) -> None:
    api = site.client("admin").get("/v1/reports/html")
    assert api.status_code == 200
    _framing_and_cache(api.headers)
    browser = site.client()
    web_login(browser, site.tokens["admin"])
    full = browser.get("/report/full")
    assert full.status_code == 200 and full.url.path == "/report/full"
    _framing_and_cache(full.headers)
    for path in ("/review", "/runs", "/report", "/login"):
        _framing_and_cache(browser.get(path).headers)


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium (/usr/bin/chromium) absent")
def test_docs_page_renders_offline_in_chromium_under_its_csp(site: Site) -> None:
    """Every request that leaves the service is blocked: the page must still show the API."""
    sync_api = pytest.importorskip("playwright.sync_api")
    own = urlsplit(site.url).netloc
    outside: list[str] = []
    problems: list[str] = []

    def only_local(route: Any) -> None:
        request = route.request
        if urlsplit(request.url).netloc == own:
            route.continue_()
        else:
            outside.append(request.url)
            route.abort()

    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = patient(browser.new_page())
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.route("**/*", only_local)
            page.goto(site.url + "/v1/docs")
            title = page.locator(".swagger-ui .info .title")
            title.wait_for()
            assert "regua" in (title.text_content() or "")
            assert page.locator(".opblock-tag").count() >= 5  # runs, tokens, reviews, …
            assert page.get_by_text("/v1/tokens/{token_id}").first.is_visible()
        finally:
            browser.close()
    assert outside == []
    # the one thing the pages' CSP blocks is a decorative icon Swagger's stylesheet inlines as a
    # data: image (img-src 'self'); no script, style or fetch is refused
    blocked = [m for m in problems if "Content Security Policy" in m]
    assert all(m.startswith("Loading the image 'data:image/svg+xml") for m in blocked), blocked
