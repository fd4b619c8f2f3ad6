"""One Chromium per worker, driven by Playwright's sync API; clean browsing state per job.

Hot path: a browser context and its page are reused for up to ``context_reuse_jobs`` jobs (then
replaced, and always replaced after a failure or a profile change). Per-job isolation inside a
reused context comes from (a) a fresh synthetic origin per job (``https://j<n>-<rand>.regua-render
.invalid``), so origin-keyed state (storage, cookies, cache partitions) is never shared, (b) page
scripts being disabled and forbidden by CSP, so a document cannot write state at all, and (c)
the context being replaced (all its state dropped) every ``context_reuse_jobs`` jobs and after
any failure. ``context_reuse_jobs=1`` gives a brand-new context per job. A job whose text has
no fetch or script vector is swapped into a shell document instead of navigated to (see
:meth:`BrowserSession.open_document`); nothing of the previous artifact survives the swap, as its
whole element tree (with its style sheets and animations) is replaced.

A context has two pages, the shell's and one for drawings navigated to (:mod:`render.tab`).

The network namespace of the sandbox is the guarantee (Chromium's speculative connections never
reach request interception); CSP, interception and the DevTools log are the second layer and the
evidence.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    Request,
    Route,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

from regua.errors import ConfigurationError, RenderError
from render.capture import capture_png
from render.launch import (
    FONTCONFIG_FILE,
    LAUNCH_ARGS,
    SUPPORTED_FONT_SETS,
    BrowserConfig,
)
from render.netlog import CDP_LOG_EVENTS, LogMethod, RequestLog, swappable
from render.tab import Tab, open_tab, serve_document
from render.watchdog import Watchdog, browser_pids
from tasks import RenderProfile

ORIGIN_SUFFIX = "regua-render.invalid"
SHELL = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
_INSTRUMENT = resources.files("render").joinpath("instrument.js").read_text(encoding="utf-8")
_INSTRUMENT_FACTORY = "() => " + _INSTRUMENT.strip()
_CALL = "(instrument, arg) => JSON.stringify(instrument(JSON.parse(arg)))"


class BrowserSession:
    """The worker's browser plus the current (reused) context and page."""

    def __init__(self, config: BrowserConfig) -> None:
        """Launch Chromium from ``config.chromium_path``; the first job opens a context and page.

        Raises :class:`ConfigurationError` when the binary is missing.
        """
        if not Path(config.chromium_path).exists():
            raise ConfigurationError(f"Chromium not found at {config.chromium_path}")
        self.config = config
        self._pw: Playwright = sync_playwright().start()
        self.relaunches = 0
        self.navigations = 0  # documents navigated to (shells and drawings), every context
        try:
            self.browser: Browser = self._launch()
        except Exception:
            self._pw.stop()
            raise
        self.version = self.browser.version
        self._context: BrowserContext | None = None
        self._tab: Tab | None = None  # the swap shell's page
        self._nav: Tab | None = None  # the page drawings are navigated in (opened on need)
        self._job_tab: Tab | None = None  # the page of the current job
        self._key: tuple[Any, ...] | None = None
        self._jobs_in_context = 0
        self._log: RequestLog | None = None
        self._document: tuple[str, bytes, str, str] | None = None
        self._counter = 0
        self._shell: str | None = None
        self._shell_url: str | None = None
        self.watchdog = Watchdog()
        self._browser_pids: list[int] | None = None

    def _launch(self) -> Browser:
        started = time.monotonic()
        env: dict[str, str | float | bool] = {
            k: v for k, v in os.environ.items() if not k.startswith("REGUA_")
        }
        env.update(FONTCONFIG_FILE=str(FONTCONFIG_FILE), TZ="UTC")
        browser = self._pw.chromium.launch(
            executable_path=self.config.chromium_path,
            args=[*LAUNCH_ARGS, *self.config.extra_args],
            chromium_sandbox=not self.config.chromium_no_sandbox,
            env=env,
            headless=True,
        )
        self.launch_ms = round((time.monotonic() - started) * 1000, 1)
        self._browser_pids = None
        return browser

    def browser_pids(self) -> list[int]:
        """Pids of this session's Chromium browser process (read once per launch)."""
        if self._browser_pids is None:
            self._browser_pids = browser_pids()
        return self._browser_pids

    def browser_alive(self) -> bool:
        """Whether the browser process is still connected (False once it died or was killed)."""
        try:
            return self.browser.is_connected() and self.browser.contexts is not None
        except Exception:  # a dead connection may raise instead of answering
            return False

    def _ensure_browser(self) -> None:
        """Relaunch the browser when a bomb or the watchdog took it down."""
        if self.browser.is_connected():
            return
        with contextlib.suppress(Exception):
            self.browser.close()
        self.browser = self._launch()
        self.relaunches += 1

    # -- context life cycle ---------------------------------------------------------------------

    def _open(self, profile: RenderProfile) -> None:
        if profile.font_set not in SUPPORTED_FONT_SETS:
            raise ConfigurationError(f"unsupported font set {profile.font_set!r}")
        context = self.browser.new_context(
            viewport={"width": profile.viewport_width, "height": profile.viewport_height},
            device_scale_factor=profile.device_scale_factor,
            java_script_enabled=False,
            timezone_id=profile.timezone,
            locale=profile.locale,
            service_workers="block",
            accept_downloads=False,
            offline=False,
            bypass_csp=False,
            color_scheme="light",
            reduced_motion="no-preference",
        )
        self._context = context
        self._tab = self._job_tab = self._open_tab(profile)
        self._nav, self._shell = None, None
        self._jobs_in_context = 0

    def _open_tab(self, profile: RenderProfile) -> Tab:
        if self._context is None:
            raise RenderError("no context is open")
        listeners = {name: self._to_log(method) for name, method in CDP_LOG_EVENTS.items()}
        return open_tab(self._context, profile, self._on_route, listeners)

    def reset(self) -> None:
        """Drop the current context (next job opens a fresh one)."""
        context, self._context = self._context, None
        self._tab, self._nav, self._job_tab, self._key = None, None, None, None
        if context is not None:
            with contextlib.suppress(Exception):  # a crashed context may refuse to close
                context.close()

    def prepare(self, profile: RenderProfile, text: str, content_type: str, csp: str) -> None:
        """Open what the next job needs before it is timed: its context, swap shell or page.

        The context may mean a new renderer process; the shell is loaded for a text of the swap
        path, the page drawings are navigated in opened for any other.

        Start-up work is the worker's, not the drawing's: without this, a job that followed a
        failed one (whose context was dropped) paid the new renderer's start on its CPU budget.
        """
        swap = self._swap_path(content_type, text)
        if swap or (self._nav is not None and self._nav.viewer):
            self._empty_navigation_tab()  # on failure it drops the context: page_for reopens
        self.page_for(profile)
        self._jobs_in_context -= 1  # counted by the job's own page_for
        if not swap:
            self._navigation_tab(profile)
        elif self._shell != csp:
            self._load_shell(content_type, csp, 30.0)

    def _swap_path(self, content_type: str, text: str) -> bool:
        return self.config.swap_documents and content_type == "image/svg+xml" and swappable(text)

    def page_for(self, profile: RenderProfile) -> Page:
        """The page to use for the next job (fresh context when needed)."""
        key = (
            profile.viewport_width,
            profile.viewport_height,
            profile.device_scale_factor,
            profile.timezone,
            profile.locale,
            profile.font_set,
        )
        self._ensure_browser()
        if (
            self._tab is None
            or key != self._key
            or self._jobs_in_context >= self.config.context_reuse_jobs
            or self._tab.page.is_closed()
        ):
            self.reset()
            self._open(profile)
            self._key = key
        assert self._tab is not None
        self._jobs_in_context += 1
        return self._tab.page

    # -- event handlers -------------------------------------------------------------------------

    def _on_route(self, route: Route, request: Request) -> None:
        doc = self._document
        if (
            doc is not None
            and request.url == doc[0]
            and request.is_navigation_request()
            and request.frame.parent_frame is None
        ):
            serve_document(route, doc[1], content_type=doc[2], csp=doc[3])
            return
        if self._log is not None:
            self._log.on_route(request.url, request.resource_type)
        route.abort("blockedbyclient")

    def _to_log(self, method: LogMethod) -> Callable[[dict[str, Any]], None]:
        """A CDP listener handing each event to the current job's log (none between jobs)."""

        def listener(event: dict[str, Any]) -> None:
            if self._log is not None:
                method(self._log, event)

        return listener

    # -- per job ----------------------------------------------------------------------------------

    def _goto(
        self, tab: Tab, body: bytes, content_type: str, csp: str, timeout_s: float
    ) -> RequestLog:
        """Navigate ``tab`` to a new synthetic origin serving ``body``; the job's new log."""
        self._counter += 1
        self.navigations += 1
        origin = f"https://j{self._counter}-{secrets.token_hex(4)}.{ORIGIN_SUFFIX}"
        url = f"{origin}/artifact.svg"
        self._log = RequestLog(document_url=url)
        self._document = (url, body, content_type, csp)
        tab.instrument = None  # a new document: a new JavaScript context
        self._job_tab = tab
        tab.page.goto(url, wait_until="load", timeout=max(1000.0, timeout_s * 1000))
        return self._log

    def _load_shell(self, content_type: str, csp: str, timeout_s: float) -> None:
        """Load the blank SVG shell served with ``csp`` into the shell's page."""
        if self._tab is None:
            raise RenderError("no page is open")
        self._shell = None
        self._shell_url = self._goto(self._tab, SHELL, content_type, csp, timeout_s).document_url
        self._shell = csp

    def _navigation_tab(self, profile: RenderProfile) -> Tab:
        """The page drawings are navigated in, opened in the current context on first need."""
        if self._nav is None or self._nav.page.is_closed():
            self._nav = self._open_tab(profile)
        return self._nav

    def open_document(
        self,
        profile: RenderProfile,
        text: str,
        content_type: str,
        csp: str,
        t0: float,
        timeout_s: float,
    ) -> tuple[Page, RequestLog, dict[str, Any]]:
        """Load ``text`` and seek to ``t0``.

        Returns the page, the job's log and the document facts (``inspect`` + ``seek`` of
        ``instrument.js``, plus ``path``).

        Fast path (``swap_documents``): an SVG whose text carries no fetch or script vector
        (:func:`swappable`) replaces the root element of a blank SVG shell document that was
        served with the same CSP from this context's synthetic origin. Anything else, or a text
        the shell's XML parser rejects, is navigated to on a fresh origin in the context's second
        page (``path: navigate``).
        """
        page = self.page_for(profile)
        if self._swap_path(content_type, text):
            if self._shell != csp:
                self._load_shell(content_type, csp, timeout_s)
            assert self._shell_url is not None and self._tab is not None
            self._log = RequestLog(document_url=self._shell_url)
            self._job_tab = self._tab
            info = self.evaluate(page, {"op": "swap", "text": text, "t": t0})
            if not info.get("fallback"):
                info["path"] = "swap"
                return page, self._log, info
            self._log = None  # the navigation's own log takes over
        tab = self._navigation_tab(profile)
        log = self._goto(tab, text.encode("utf-8"), content_type, csp, timeout_s)
        info = self.evaluate(tab.page, {"op": "inspect_frame", "t": t0})
        info["path"] = "navigate"
        tab.viewer = bool(info.get("xml_viewer"))
        return tab.page, log, info

    def evaluate(self, page: Page, arg: dict[str, Any]) -> Any:
        """Run the instrumentation script (never content from the artifact) with ``arg``.

        The script is compiled once per JavaScript context and kept as a handle; each call then
        sends only ``arg`` (measured 3.2 against 6.5 CPU ms per call for sending the source).
        Through Playwright, not a raw ``Runtime.evaluate`` on the DevTools session: the raw call
        is ~1 ms faster but never returns when the renderer crashes mid-call (measured: V8 OOM),
        while Playwright raises ``Target crashed`` and the job answers ``crash``. ``arg`` and the
        result travel as JSON strings, which Playwright does not walk (~3 CPU ms less per call).
        """
        tab = self._tab_of(page)
        if tab.instrument is None:
            tab.instrument = page.evaluate_handle(_INSTRUMENT_FACTORY)
        answer = tab.instrument.evaluate(_CALL, json.dumps(arg))
        return None if answer is None else json.loads(answer)

    def _tab_of(self, page: Page) -> Tab:
        for tab in (self._tab, self._nav):
            if tab is not None and tab.page is page:
                return tab
        raise RenderError("that page is not open in this session")

    def evaluate_source(self, page: Page, arg: dict[str, Any]) -> Any:
        """The instrumentation script, sent and compiled anew with every call.

        The reference path of :mod:`render.frames` (kept for comparisons) calls it so.
        """
        return page.evaluate(_INSTRUMENT, arg)

    def screenshot(self) -> bytes:
        """PNG of the viewport in device pixels, straight from DevTools (fast path)."""
        if self._job_tab is None or self._key is None:
            raise RenderError("no page is open")
        # No ``clip``: the viewport is the frame size; a clip changes the emulation per capture
        params = {
            "format": "png",
            "optimizeForSpeed": True,
            "captureBeyondViewport": False,
            "fromSurface": True,
        }
        return capture_png(self._job_tab.cdp, params)

    def script_executed(self) -> bool:
        """Whether page script ran since the last call.

        Read from DevTools ``ScriptDuration`` growing; our own DevTools evaluations are not
        counted there.
        """
        tab = self._job_tab
        if tab is None:
            return False
        now = tab.script_duration_ms()
        ran = now > tab.script_ms + 1e-6
        tab.script_ms = now
        return ran

    def current_log(self) -> RequestLog | None:
        """The request log of the job in progress (None between jobs)."""
        return self._log

    def finish_job(self) -> None:
        """Forget the job's document; stop attributing events to it."""
        self._document = None
        self._log = None
        self._job_tab = self._tab

    def _empty_navigation_tab(self) -> None:
        """Send a navigated drawing's page to ``about:blank`` before a swapped job.

        Before a navigated one only after an XML viewer's page, whose script may run late.
        """
        nav = self._nav
        if nav is None or nav.page.url == "about:blank":
            return
        try:
            nav.empty()
        except PlaywrightError:
            self.reset()  # a page that cannot be emptied is never reused

    def close(self) -> None:
        """Close the browser and Playwright."""
        self.reset()
        try:
            self.browser.close()
        finally:
            self._pw.stop()
