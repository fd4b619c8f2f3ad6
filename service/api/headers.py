"""The security headers of everything the service answers with HTML or stored bytes.

One place for every Content-Security-Policy, so pages, the report page, the API docs page and
served artifacts cannot drift apart.
"""

from __future__ import annotations

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'; connect-src 'self'"
)
"""The web pages and the API docs: scripts and styles are static files of the service, nothing
inline, nothing from another origin."""

REPORT_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The report page: no script at all, one stylesheet, never framed."""

ARTIFACT_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
"""A served artifact (an SVG among them) can run nothing and load nothing."""

_COMMON = {
    "X-Content-Type-Options": "nosniff",
    # same-origin: our own form posts carry their Origin (``no-referrer`` would make it "null",
    # and the CSRF check needs it); other sites still get no Referer
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

PAGE_HEADERS = {"Content-Security-Policy": PAGE_CSP, **_COMMON}
"""Headers of every web page and of the API docs page."""

REPORT_HEADERS = {"Content-Security-Policy": REPORT_CSP, **_COMMON}
"""Headers of the report page (``/v1/reports/html``, ``/report/full``)."""


def artifact_headers(sha256: str) -> dict[str, str]:
    """Headers of a served artifact: its address, immutable caching, no sniffing, no script."""
    return {
        "X-Content-SHA256": sha256,
        "Cache-Control": "private, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": ARTIFACT_CSP,
    }
