"""The gallery in Debian Chromium: a screenshot checked against what the grid must show.

Screenshots go to ``<tmp>/gallery`` or ``$REGUA_SCREENSHOT_DIR``. The checks read the
screenshot's pixels: every badge is painted in its outcome's colour, every tile's image is
painted (not blank), the animated tile is an animated PNG of the stored frames; the page asks
nothing of another origin and logs no CSP violation; a click on a tile opens its run page.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from PIL import Image

from regua.settings import Settings
from tests.helpers.browser import patient
from tests.helpers.gallery import MODELS, RUNS, seed_gallery
from tests.helpers.page_browser import launch_chromium
from tests.helpers.review_runs import SECRET_MODEL, SECRET_PROVIDER, TASK_REF
from tests.helpers.web import Site, seeded_site

CHROMIUM = Path("/usr/bin/chromium")
BADGE_RGB = {"pass": (0x1B, 0x7F, 0x3B), "fail": (0xB4, 0x23, 0x18), "pending": (0xA1, 0x5C, 0x00)}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian Chromium driven by Playwright (one for the module: each test opens a context)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One seeded site with the gallery's runs for the module: its tests only read it."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("gallery") / "data",
        review_audit_rate=1.0,
        web_origins=["https://regua.example"],
    )
    with seeded_site(settings) as found:
        seed_gallery(found)
        yield found


class Visit:
    """A logged-in browser context that records every request and console error."""

    def __init__(self, browser: Any, site: Site, who: str) -> None:
        self.context = patient(browser.new_context(viewport={"width": 1280, "height": 900}))
        self.page = patient(self.context.new_page())
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(site.url + "/login")
        self.page.fill("#token", site.tokens[who])
        self.page.press("#token", "Enter")
        self.page.wait_for_load_state()

    def gallery(self, site: Site) -> None:
        """Open the gallery of the seeded task and wait until every image has loaded."""
        self.page.goto(f"{site.url}/gallery?task={TASK_REF}")
        check = "() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
        deadline = time.monotonic() + 60  # bounds a hang only
        while not self.page.evaluate(check):
            assert time.monotonic() < deadline, "gallery images did not load"
            self.page.wait_for_timeout(100)


def _near(rgb: object, want: tuple[int, int, int]) -> bool:
    assert isinstance(rgb, tuple)
    return all(abs(int(a) - b) <= 6 for a, b in zip(rgb[:3], want, strict=True))


def test_gallery_screenshot_shows_every_tile_and_badge(
    site: Site, browser: Any, tmp_path: Path
) -> None:
    visit = Visit(browser, site, "admin")
    visit.gallery(site)
    page = visit.page
    tiles = page.locator(".tile")
    assert tiles.count() == len(RUNS) + 2  # the seeded site's two runs besides
    assert page.locator("th.model").all_inner_texts() == [*MODELS, SECRET_MODEL]
    out = Path(os.environ.get("REGUA_SCREENSHOT_DIR") or tmp_path) / "gallery"
    out.mkdir(parents=True, exist_ok=True)
    shot = out / "gallery-1280x900.png"
    page.screenshot(path=str(shot), full_page=True)
    image = Image.open(shot).convert("RGB")
    badges = page.locator(".tile .badge")
    for i in range(badges.count()):
        outcome = badges.nth(i).inner_text().strip()
        box = badges.nth(i).bounding_box()
        assert box is not None
        x, y = int(box["x"] + 3), int(box["y"] + box["height"] / 2)
        assert _near(image.getpixel((x, y)), BADGE_RGB[outcome]), (outcome, image.getpixel((x, y)))
    for i in range(tiles.count()):  # each drawing is painted: its circle is not page white
        box = tiles.nth(i).locator("img").bounding_box()
        assert box is not None and box["width"] > 150
        centre = image.getpixel(
            (int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2))
        )
        assert centre != (255, 255, 255), f"tile {i} is blank"
    failing = page.locator(".tile ul.failing").all_inner_texts()
    assert sorted(t.replace("✗", "").split() for t in failing) == [["B1"], ["R1", "R2"]]
    # the animated tile: an animated PNG of three frames, fetched from the page's own origin
    src = page.locator(".tile img[alt^='animated']").get_attribute("src") or ""
    assert src.startswith("/ui/motion?frames=")
    body = visit.context.request.get(site.url + src).body()
    assert getattr(Image.open(io.BytesIO(body)), "n_frames", 1) == 3
    # nothing from elsewhere, no CSP complaint
    origin = urlsplit(site.url).netloc
    assert {urlsplit(u).netloc for u in visit.requests} == {origin}
    assert not [e for e in visit.errors if "Content Security Policy" in e]
    # a click opens the run page
    page.locator(".tile[data-failing='B1'] a.open").click()
    page.wait_for_load_state()
    assert urlsplit(page.url).path == "/runs/g1"
    visit.context.close()


def test_a_reviewers_gallery_in_the_browser_names_no_model(site: Site, browser: Any) -> None:
    visit = Visit(browser, site, "reviewer")
    visit.gallery(site)
    text = visit.page.inner_text("body")
    html = visit.page.content()
    for secret in (*MODELS, SECRET_MODEL, SECRET_PROVIDER):
        assert secret not in text and secret not in html
    assert visit.page.locator(".tile").count() == len(RUNS) + 2
    assert visit.page.locator(".tile a").count() == 0  # a reviewer opens no run page
    assert visit.page.locator("th.model").all_inner_texts() == [f"model {i}" for i in range(1, 5)]
    visit.context.close()
