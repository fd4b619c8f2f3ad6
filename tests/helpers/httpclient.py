"""An ``httpx.Client`` for tests that does not build a TLS context of its own."""

from __future__ import annotations

from typing import Any

import httpx

from regua.client.transport import shared_tls_context


class Http(httpx.Client):
    """``httpx.Client`` (same arguments) verifying TLS with the process's shared context.

    A plain ``httpx.Client`` reads and parses the CA bundle again (~45 CPU ms) even for the
    plain-HTTP servers the tests talk to; tests make hundreds of clients.
    """

    def __init__(self, **kwargs: Any) -> None:
        """Build the client; ``verify`` defaults to :func:`shared_tls_context`."""
        kwargs.setdefault("verify", shared_tls_context())
        super().__init__(**kwargs)
