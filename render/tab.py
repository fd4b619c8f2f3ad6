"""One page of the worker's browser context with its DevTools session, set up for render jobs.

A context holds up to two tabs (see :mod:`render.browser`): the swap shell, kept for the whole
context, and the navigation tab, which opens drawings the shell cannot take. A navigated drawing
therefore never displaces the shell (reloading it cost a second sandboxed navigation, ~250 CPU
ms: each opaque-origin document gets a new renderer process). Its page is sent to
``about:blank`` before the next swapped job, so nothing of it runs or fetches while the shell
renders; the next navigated drawing replaces it by its own navigation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import BrowserContext, CDPSession, JSHandle, Page, Request, Route

from tasks import RenderProfile

Listener = Callable[[dict[str, Any]], None]


@dataclass
class Tab:
    """A page, its DevTools session and what the session keeps about the page's document."""

    page: Page
    cdp: CDPSession
    script_ms: float = 0.0
    """DevTools ``ScriptDuration`` at the last reading (ms)."""
    instrument: JSHandle | None = None
    """The instrumentation, compiled in the current document (None after a navigation)."""
    viewer: bool = False
    """The document is shown in Chromium's XML viewer, whose built-in script may still run."""

    def script_duration_ms(self) -> float:
        """The page's DevTools ``ScriptDuration`` now, in ms."""
        for metric in self.cdp.send("Performance.getMetrics")["metrics"]:
            if metric["name"] == "ScriptDuration":
                return float(metric["value"]) * 1000
        return 0.0

    def empty(self) -> None:
        """Send the page to ``about:blank``: nothing of its drawing stays alive to run or fetch."""
        self.instrument, self.viewer = None, False
        self.page.goto("about:blank", timeout=30_000)
        self.script_ms = self.script_duration_ms()


def serve_document(route: Route, body: bytes, *, content_type: str, csp: str) -> None:
    """Answer the job's own navigation with its drawing: its CSP, never cached or sniffed."""
    headers = {
        "content-type": content_type,
        "content-security-policy": csp,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
    }
    route.fulfill(status=200, headers=headers, body=body)


def open_tab(
    context: BrowserContext,
    profile: RenderProfile,
    on_route: Callable[[Route, Request], None],
    listeners: dict[str, Listener],
) -> Tab:
    """A new page of ``context``: every request through ``on_route``, DevTools events logged.

    The device metrics override makes the viewport the frame size (no ``clip`` per capture).
    """
    page = context.new_page()
    page.route("**/*", on_route)
    cdp = context.new_cdp_session(page)
    for name, listener in listeners.items():
        cdp.on(name, listener)
    for domain in ("Network", "Page", "Log", "Performance"):
        cdp.send(f"{domain}.enable")
    metrics: dict[str, Any] = {"width": profile.viewport_width}
    metrics["height"] = profile.viewport_height
    metrics.update(deviceScaleFactor=profile.device_scale_factor, mobile=False)
    cdp.send("Emulation.setDeviceMetricsOverride", metrics)
    tab = Tab(page, cdp)
    tab.script_ms = tab.script_duration_ms()
    return tab
