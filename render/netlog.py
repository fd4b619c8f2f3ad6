"""The Content-Security-Policy of a render job and the log of everything the page tried to fetch.

Three independent witnesses feed one :class:`RequestLog`:

- ``route``: Playwright's request interception saw the request and aborted it;
- ``csp``: Chromium refused the load because of the policy (such a request never reaches the
  route handler, so without this witness ``blocked_requests`` would be silently empty);
- ``devtools``: the DevTools ``Network`` domain announced a request the other two did not explain
  (for example one that failed for another reason).

Each attempted URL appears once, with the strongest witness (``route`` > ``csp`` > ``devtools``).
:func:`swappable` tells whether an SVG text carries any fetch or script vector at all.

Navigation of the page itself (``<meta http-equiv="refresh">``, ``location`` changes, form
submission) is refused by the policy's ``sandbox`` directive (no ``allow-*`` token: no scripts,
forms, popups or top-level navigation; a sandboxed document's refresh is never followed), so a
drawing can never replace itself mid-render. Each refusal Chromium reports, and each navigation
the page requested (DevTools ``Page.frameRequestedNavigation``), is kept in
:attr:`RequestLog.navigations` as evidence.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tasks import AllowedFeatures

MAX_URL_CHARS = 2048
MAX_ENTRIES = 2000
_CSP_URL = re.compile(r"'((?:[a-zA-Z][a-zA-Z0-9+.-]*:)[^']*)'")
_PRECEDENCE = {"route": 3, "csp": 2, "devtools": 1}


def build_csp(allowed: AllowedFeatures) -> str:
    """The policy served with the artifact: no scripts ever, no fetch unless the task allows it.

    Inline styles stay allowed (SVG presentation needs ``<style>`` and ``style=""``). ``data:``
    images and fonts are allowed only when the task allows raster images / external resources.
    """
    img = ["data:"] if allowed.raster_images else []
    font: list[str] = []
    style = ["'unsafe-inline'"]
    if allowed.external_resources:
        img.append("https:")
        font += ["https:", "data:"]
        style.append("https:")
    directives = {
        "default-src": ["'none'"],
        "script-src": ["'none'"],
        "script-src-attr": ["'none'"],
        "style-src": style,
        "img-src": img or ["'none'"],
        "font-src": font or ["'none'"],
        "connect-src": ["'none'"],
        "media-src": ["'none'"],
        "object-src": ["'none'"],
        "frame-src": ["'none'"],
        "child-src": ["'none'"],
        "worker-src": ["'none'"],
        "manifest-src": ["'none'"],
        "form-action": ["'none'"],
        "base-uri": ["'none'"],
    }
    policy = "; ".join(f"{name} {' '.join(values)}" for name, values in directives.items())
    return policy + "; sandbox"


def _clip(url: str) -> str:
    return url if len(url) <= MAX_URL_CHARS else url[:MAX_URL_CHARS] + "…"


@dataclass
class RequestLog:
    """Attempted requests and policy violations of one job (times relative to job start)."""

    document_url: str
    started: float = field(default_factory=time.monotonic)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    csp_violations: list[dict[str, Any]] = field(default_factory=list)
    navigations: list[dict[str, Any]] = field(default_factory=list)
    refreshes: list[str] = field(default_factory=list)
    _types: dict[str, str] = field(default_factory=dict)
    _urls: dict[str, str] = field(default_factory=dict)
    dropped: int = 0

    def _now_ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 1)

    def add(self, url: str, resource_type: str, via: str) -> None:
        """Record one attempt; keeps the strongest witness for a URL seen several times."""
        if url == self.document_url or not url:
            return
        if via == "devtools" and url.startswith("data:"):
            return  # inline data seen by DevTools only (e.g. Chromium's own error-page images)
        key = _clip(url)
        known = self.entries.get(key)
        if known is not None:
            if _PRECEDENCE[via] > _PRECEDENCE[known["via"]]:
                known["via"] = via
            if known["resource_type"] in ("", "other") and resource_type:
                known["resource_type"] = resource_type
            return
        if len(self.entries) >= MAX_ENTRIES:
            self.dropped += 1
            return
        entry = {"url": key, "resource_type": resource_type, "time_ms": self._now_ms(), "via": via}
        self.entries[key] = entry

    # -- witnesses ------------------------------------------------------------------------------

    def on_route(self, url: str, resource_type: str) -> None:
        """Playwright's route handler aborted a request."""
        self.add(url, resource_type, "route")

    def on_request_will_be_sent(self, event: dict[str, Any]) -> None:
        """CDP ``Network.requestWillBeSent``."""
        request = event.get("request") or {}
        url = str(request.get("url", ""))
        kind = str(event.get("type", "other")).lower()
        self._urls[str(event.get("requestId"))] = url
        self._types[str(event.get("requestId"))] = kind
        self.add(url, kind, "devtools")

    def on_loading_failed(self, event: dict[str, Any]) -> None:
        """CDP ``Network.loadingFailed``: ``blockedReason == "csp"`` upgrades the witness."""
        request_id = str(event.get("requestId"))
        url = self._urls.get(request_id, "")
        kind = str(event.get("type") or self._types.get(request_id, "other")).lower()
        if url and event.get("blockedReason") in ("csp", "content-type", "inspector"):
            self.add(url, kind, "csp")

    def on_navigation_requested(self, event: dict[str, Any]) -> None:
        """CDP ``Page.frameRequestedNavigation``: the page asked to navigate a frame."""
        self._navigation("requested", str(event.get("reason") or ""), str(event.get("url", "")))

    def _navigation(self, kind: str, detail: str, url: str | None = None) -> None:
        if len(self.navigations) < MAX_ENTRIES:
            entry = {"time_ms": self._now_ms(), "kind": kind, "detail": detail[:500]}
            entry["url"] = None if url is None else _clip(url)
            self.navigations.append(entry)

    def refused_refresh(self, content: str) -> None:
        """A ``<meta http-equiv="refresh">`` found in the document (its ``content``)."""
        if len(self.refreshes) < MAX_ENTRIES:
            self.refreshes.append(content[:MAX_URL_CHARS])

    def refused_navigations(self) -> list[dict[str, Any]]:
        """Every navigation the page attempted and the policy refused, in order.

        Chromium's refusal of a refresh does not name its target; the document's own ``<meta>``
        does, so each refresh found in the document is paired with a refusal (in order).
        """
        refusals = [n for n in self.navigations if n["kind"] == "meta-refresh"]
        out: list[dict[str, Any]] = []
        for i, content in enumerate(self.refreshes):
            known = refusals[i] if i < len(refusals) else None
            detail = known["detail"] if known else "refused: a sandboxed document never refreshes"
            out.append(
                {
                    "time_ms": known["time_ms"] if known else None,
                    "kind": "meta-refresh",
                    "url": _refresh_target(content),
                    "detail": detail,
                    "content": content,
                }
            )
        out += refusals[len(self.refreshes) :]
        out += [n for n in self.navigations if n["kind"] != "meta-refresh"]
        return out

    def on_log_entry(self, event: dict[str, Any]) -> None:
        """CDP ``Log.entryAdded``: Content-Security-Policy violations and refused navigations."""
        entry = event.get("entry") or {}
        text = str(entry.get("text", ""))
        for prefix, kind in _NAVIGATION_REFUSALS:
            if text.startswith(prefix):
                self._navigation(kind, text)
                return
        if "Content Security Policy" not in text:
            return
        url_match = _CSP_URL.search(text)
        blocked = url_match.group(1) if url_match else None
        if len(self.csp_violations) < MAX_ENTRIES:
            self.csp_violations.append(
                {"time_ms": self._now_ms(), "blocked_url": blocked, "message": text[:500]}
            )
        if blocked is not None and not text.startswith(("Executing", "Evaluating")):
            self.add(blocked, _guess_type(text), "csp")

    def blocked_requests(self) -> list[dict[str, Any]]:
        """Every attempted request, in order of first sight."""
        return sorted(self.entries.values(), key=lambda e: float(e["time_ms"]))

    def script_attempts(self) -> int:
        """How many inline scripts / event handlers the policy refused to run."""
        return sum(
            1 for v in self.csp_violations if str(v["message"]).startswith(("Executing", "Evaluat"))
        )


_NAVIGATION_REFUSALS = (
    ("Refused to execute the redirect specified via '<meta http-equiv='refresh'", "meta-refresh"),
    ("Blocked form submission", "form-submission"),
    ("Unsafe attempt to initiate navigation", "navigation"),
    ("Blocked navigation", "navigation"),
)
"""Chromium's console messages when the policy's ``sandbox`` refuses a navigation."""


_REFRESH_URL = re.compile(r"^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?['\"]?([^'\"]*)", re.I)


def _refresh_target(content: str) -> str:
    """The URL of a refresh's ``content`` (``0;url=about:blank``); empty: the document itself."""
    match = _REFRESH_URL.match(content)
    return _clip(match.group(1).strip()) if match else ""


def _guess_type(text: str) -> str:
    """Resource type from a CSP message ("Loading the image '...' violates ...")."""
    match = re.match(r"(?:Loading|Refused to load) the (\w+)", text)
    return match.group(1).lower() if match else "other"


_FETCH_VECTOR = re.compile(
    r"<\?xml-stylesheet|<!DOCTYPE|<!ENTITY|<script|<foreignObject|<image|<feImage|<iframe"
    r"|<object|<embed|<link|<audio|<video|<a[\s>]|@import|@font-face|image-set|://|//|data:"
    r"|\bon[a-z]+\s*=|(?:href|src)\s*=\s*(?:\"(?!#)|'(?!#)|(?![\"'#]))"
    r"|url\(\s*(?:\"(?!#)|'(?!#)|(?![\"'#]))",
    re.IGNORECASE,
)
_XMLNS = re.compile(r"""xmlns(?::[\w.-]+)?\s*=\s*(?:"[^"]*"|'[^']*')""")


@functools.lru_cache(maxsize=4)
def swappable(text: str) -> bool:
    """True when an SVG text has nothing that could fetch or script (namespace names aside).

    Such a document renders the same whether navigated to or swapped into the shell. A job asks
    three times of one text (preparing, opening, checking for script): the answer is kept for
    the last few texts (~0.2 CPU ms per scan of a corpus drawing).
    """
    return _FETCH_VECTOR.search(_XMLNS.sub("", text)) is None


LogMethod = Callable[[RequestLog, dict[str, Any]], None]
CDP_LOG_EVENTS: dict[str, LogMethod] = {
    "Network.requestWillBeSent": RequestLog.on_request_will_be_sent,
    "Network.loadingFailed": RequestLog.on_loading_failed,
    "Log.entryAdded": RequestLog.on_log_entry,
    "Page.frameRequestedNavigation": RequestLog.on_navigation_requested,
}
"""The CDP events the current job's request log records, each with the method that takes it."""
