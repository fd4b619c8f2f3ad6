"""The provider protocol: one attempt of one call (the registry is :mod:`.registry`).

A provider turns one :class:`ProviderCall` into one :class:`ProviderReply` with ONE attempt;
retries, backoff, ``Retry-After``, timing and error capture live in :mod:`.attempts`, the same
for every provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import httpx
from pydantic import JsonValue

from regua.errors import GenerationError
from service.generation.request import GenerationParams


@dataclass(frozen=True)
class ProviderCall:
    """One call of a model: the parameters, the prompt, which repeat, and the key (not kept)."""

    params: GenerationParams
    prompt: str
    repeat: int
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ProviderReply:
    """What a model answered. A refusal or an empty reply is a reply (no SVG: fail by rule)."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    refusal: bool = False


class ProviderHttpError(GenerationError):
    """The provider answered with an error status (or did not answer)."""

    def __init__(self, cause: str, *, retryable: bool, retry_after_s: float | None = None) -> None:
        """Keep the cause (e.g. ``http_429``), whether to retry and the server's wait."""
        self.cause = cause
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        super().__init__(cause)


class Provider(Protocol):
    """A model API regua can generate with."""

    api: str
    mock: bool
    """A mock's replies are bundled, never a model's: its runs are marked and kept apart."""

    def request_params(self, params: GenerationParams) -> dict[str, JsonValue]:
        """The exact request parameters sent (without the prompt or any key), as recorded."""
        ...

    def send(self, http: httpx.Client, call: ProviderCall) -> ProviderReply:
        """Make one attempt; raise :class:`ProviderHttpError` or an ``httpx`` error on failure."""
        ...
