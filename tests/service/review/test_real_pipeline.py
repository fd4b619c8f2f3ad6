"""The queue on top of the real pipeline (checks, sandboxed Chromium render, judges).

Skips with the reason when bubblewrap, Chromium or a stage package is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.browser import patient
from tests.helpers.httpclient import Http
from tests.helpers.server import Served, require_real_rendering

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "outputs"
SECRET = "zz-real-secret-model-9"


@pytest.mark.browser
@pytest.mark.sandbox
def test_real_runs_feed_the_queue_and_a_label_appends_an_evaluation(tmp_path: Path) -> None:
    require_real_rendering()
    data = tmp_path / "data"
    data.mkdir()
    server = Served(data, REGUA_REVIEW_AUDIT_RATE="1.0")
    try:
        admin = server.client()
        reply = "Sure:\n" + (SAMPLES / "structured-good.svg").read_text()
        run_id = admin.submit("pelican-bicycle-structured@1", SECRET, reply, provider="p")
        view = admin.wait([run_id], timeout_s=240)[run_id]
        assert view["status"] == "done" and view["outcome"]["status"] in {"pass", "pending"}
        before = len(view["evaluations"])
        token = admin.http.post("/v1/tokens", json={"role": "reviewer", "name": "real"}).json()
        rev = Http(
            base_url=server.url, headers={"Authorization": f"Bearer {token['token']}"}, timeout=60
        )
        body = rev.get("/v1/reviews/next")
        assert SECRET not in body.text and run_id not in body.text
        item = body.json()["item"]
        assert item is not None and item["criterion"]["question"]
        frame = rev.get(item["frames"][0]["url"])
        assert frame.status_code == 200 and frame.content[:4] == b"\x89PNG"
        parts = {m["part"] for m in item["masks"]}
        assert {"pelican", "bicycle", "foot-left"} <= parts
        assert {m["kind"] for m in item["masks"]} == {"visible", "alone"}
        label = rev.post(f"/v1/reviews/{item['item_id']}", json={"status": "pass", "note": "ok"})
        assert label.status_code == 200, label.text
        if item["kind"] == "audit":  # a second, agreeing label resolves an audit item
            # the admin submitted this run, so it may not label it; a second reviewer does
            refused = admin.http.post(f"/v1/reviews/{item['item_id']}", json={"status": "pass"})
            assert refused.status_code == 403, refused.text
            second = admin.http.post("/v1/tokens", json={"role": "reviewer", "name": "real-2"})
            with Http(
                base_url=server.url,
                headers={"Authorization": f"Bearer {second.json()['token']}"},
                timeout=60,
            ) as rev2:
                other = rev2.post(f"/v1/reviews/{item['item_id']}", json={"status": "pass"})
            assert other.json()["state"] == "resolved", other.text
        after = admin.run(run_id)
        assert len(after["evaluations"]) == before + 1
        assert after["evaluations"][-1]["kind"] == "review"
        rev.close()
        shots = Path(os.environ.get("REGUA_SCREENSHOT_DIR") or tmp_path / "out" / "screenshots")
        _screenshots(server.url, token["token"], admin.http.headers["authorization"], run_id, shots)
        print(f"\nreal-pipeline screenshots written to {shots}")
        admin.close()
    finally:
        server.stop()


def _screenshots(url: str, reviewer: str, admin_header: str, run_id: str, out: Path) -> None:
    """Review page (with a mask overlaid) and run page with real sandbox frames, 1280x800."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    admin = admin_header.split(" ", 1)[1]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for who, path, name in (
            (reviewer, "/review", "review-real"),
            (admin, f"/runs/{run_id}", "run-real"),
        ):
            context = patient(browser.new_context(viewport={"width": 1280, "height": 800}))
            page = context.new_page()
            page.goto(f"{url}/login?next={path}")
            page.fill("#token", who)
            with page.expect_navigation():
                page.press("#token", "Enter")
            if name == "review-real" and page.locator("#toggle-masks").count():
                page.keyboard.press("m")
                page.locator(".masks:not(.hidden) figure", has_text="pelican · visible").locator(
                    "button"
                ).click()
                page.evaluate("window.scrollTo(0, 0)")
                page.wait_for_timeout(500)
            target = out / f"{name}-1280x800.png"
            page.screenshot(path=str(target))
            assert target.stat().st_size > 10_000
        browser.close()
