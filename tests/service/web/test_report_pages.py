"""Open the report page in Chromium under a strict CSP: charts and the pending range are there."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.headers import REPORT_CSP as CSP  # what the service sends
from service.reports import build_report
from service.reports.html import render_html, stylesheet
from tests.helpers.browser import patient
from tests.helpers.page_browser import launch_chromium
from tests.helpers.reports import counts, runs

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed"),
]


def test_report_page_renders_charts_and_pending_range_under_strict_csp() -> None:
    from playwright.sync_api import Route, sync_playwright

    rows = [r._replace(criteria={"C1": "pass"}) for r in runs("model-a", counts(72, 18, 10))]
    rows += runs("model-b", counts(50, 45, 5))
    page_html = render_html(build_report(rows))

    def serve(route: Route) -> None:
        if route.request.url.endswith("/report.css"):
            route.fulfill(body=stylesheet(), content_type="text/css")
        else:
            route.fulfill(
                body=page_html, content_type="text/html", headers={"Content-Security-Policy": CSP}
            )

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = patient(browser.new_page())
            messages: list[str] = []
            page.on("console", lambda m: messages.append(m.text))
            page.route("http://report.test/**", serve)
            page.goto("http://report.test/report.html")
            charts = page.locator("svg[role=img]")
            assert charts.count() == 4  # pool ranking, bars, heat map, ranking
            titles = [charts.nth(i).locator("title").first.text_content() for i in range(4)]
            assert any("Outcomes per model" in (t or "") for t in titles)
            assert any("Bradley-Terry" in (t or "") for t in titles)
            assert page.get_by_text("between 72 % and 82 %").first.is_visible()
            box = charts.first.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 80
            # the linked stylesheet was allowed and applied (grid layout of versions)
            display = page.eval_on_selector(".versions", "e => getComputedStyle(e).display")
            assert display == "grid"
            assert not [m for m in messages if "Content Security Policy" in m]
        finally:
            browser.close()
