"""What a worker's browser opens besides the jobs' pages: nothing (each page costs CPU)."""

from __future__ import annotations

import os

import pytest

from tests.helpers.render_pool import CHROMIUM
from tests.render.conftest import task


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed")
def test_a_context_opens_no_browser_ui_page() -> None:
    # Chromium 156 loaded two chrome://omnibox-popup.top-chrome pages (their own WebUI renderer,
    # ~0.5 CPU s) in every new context; the launch switches turn them off
    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    svg = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="9" height="9"/></svg>'
    navigated = svg.replace("</svg>", '<image href="https://leak.example/x.png"/></svg>')
    handler = create_handler({"chromium_no_sandbox": True, "self_test": True})
    try:
        cdp = handler.session.browser.new_browser_cdp_session()
        # the shell's page, then the navigation page too (about:blank again before a swap)
        for text, pages in ((svg, 1), (navigated, 2), (svg, 2)):
            result, _ = handler.handle({"kind": "render", "svg": text, "task": task().to_wire()})
            assert result["status"] == "ok"
            targets = cdp.send("Target.getTargets")["targetInfos"]
            assert [t["type"] for t in targets] == ["page"] * len(targets), targets
            assert all(t["url"].startswith(("https://", "about:blank")) for t in targets), targets
            assert len(targets) == pages, targets
        handler.session.reset()  # a new context: still nothing of the browser's own
        handler.handle({"kind": "render", "svg": svg, "task": task().to_wire()})
        targets = cdp.send("Target.getTargets")["targetInfos"]
        assert [t["type"] for t in targets] == ["page"], targets
    finally:
        handler.close()
