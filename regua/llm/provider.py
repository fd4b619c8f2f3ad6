"""The provider protocol: one attempt of one call against one model API.

A provider turns one :class:`~regua.llm.call.ModelCall` into one
:class:`~regua.llm.call.ModelReply` with ONE attempt; retries, backoff, ``Retry-After``,
limits, timing, redaction and error capture live in :mod:`regua.llm.client`, the same for every
provider. Providers are registered in :data:`regua.llm.registry.PROVIDERS`.
"""

from __future__ import annotations

from typing import Protocol

import httpx
from pydantic import JsonValue

from regua.llm.call import ModelCall, ModelReply


class Provider(Protocol):
    """A model API regua can call."""

    api: str
    mock: bool
    """A mock's replies are bundled, never a model's: its runs are marked and kept apart."""

    def request_params(self, call: ModelCall) -> dict[str, JsonValue]:
        """The exact request parameters sent (without the turns or any key), as recorded."""
        ...

    def send(self, http: httpx.Client, call: ModelCall) -> ModelReply:
        """Make one attempt; raise ``ProviderHttpError`` or an ``httpx`` error on failure."""
        ...
