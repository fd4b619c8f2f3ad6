"""Every client of a process verifies TLS with one context, built once."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from regua.client import AsyncClient, Client
from regua.client.transport import AsyncServiceHttp, ServiceHttp, shared_tls_context


def _context_of(http: Any) -> ssl.SSLContext:
    # httpx keeps the context in its default transport's connection pool (httpcore)
    context = http._transport._pool._ssl_context
    assert isinstance(context, ssl.SSLContext)
    return context


def test_clients_share_one_verifying_context() -> None:
    shared = shared_tls_context()
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.cert_store_stats()["x509_ca"] > 0  # the CA bundle is loaded
    with ServiceHttp(timeout=2) as first, ServiceHttp(timeout=2) as second:
        assert _context_of(first) is shared and _context_of(second) is shared
    with Client("https://regua.invalid", "token") as client:
        assert _context_of(client.http) is shared
    unverified = ServiceHttp(verify=False)  # what a caller asks for still wins
    assert _context_of(unverified) is not shared
    assert _context_of(unverified).verify_mode == ssl.CERT_NONE
    unverified.close()


def test_async_clients_share_it_too() -> None:
    async def contexts() -> list[ssl.SSLContext]:
        async with (
            AsyncServiceHttp(timeout=2) as http,
            AsyncClient("https://regua.invalid", "t") as c,
        ):
            return [_context_of(http), _context_of(c.http)]

    assert asyncio.run(contexts()) == [shared_tls_context()] * 2
