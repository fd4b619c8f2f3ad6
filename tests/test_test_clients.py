"""The tests' own HTTP clients share the process's TLS context (issue 28 point 6).

A client that builds its own context reads and parses the CA bundle (~40 CPU ms) even to talk
plain HTTP to a test server, and the suite makes hundreds of them.
"""

from __future__ import annotations

import re
import ssl
from pathlib import Path

from regua.client.transport import shared_tls_context
from tests.helpers.httpclient import Http

TESTS = Path(__file__).resolve().parent
OWN_CONTEXT = re.compile(
    r"\bhttpx\.((Async)?Client|get|post|put|patch|delete|head|request|stream)\("
)


def test_http_verifies_with_the_shared_context() -> None:
    with Http(timeout=2) as http:
        context = http._transport._pool._ssl_context  # type: ignore[attr-defined]
        assert isinstance(context, ssl.SSLContext) and context is shared_tls_context()


def test_no_test_builds_an_httpx_client_of_its_own() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "httpclient.py" and path != Path(__file__).resolve()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OWN_CONTEXT.search(line)
    ]
    assert not offenders, f"use tests.helpers.httpclient.Http (or verify=): {offenders}"
