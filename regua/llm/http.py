"""One HTTP attempt to a model API; an error status becomes a :class:`ProviderHttpError`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import JsonValue

from regua.errors import GenerationError
from regua.retry_after import retry_after_seconds

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt (rate limits, overload, server errors), for every caller."""
MAX_DETAIL = 500


@dataclass(eq=False)
class ProviderHttpError(GenerationError):
    """The provider answered with an error status, or with a body that is no answer.

    ``cause`` is one line (e.g. ``http_429: slow down``); ``status`` is None for a 2xx answer
    that carries no reply; ``retry_after_s`` is the server's wait, when it sent one.
    """

    cause: str
    retryable: bool = field(kw_only=True)
    retry_after_s: float | None = field(default=None, kw_only=True)
    status: int | None = field(default=None, kw_only=True)
    body: str = field(default="", kw_only=True)

    def __str__(self) -> str:
        """The cause."""
        return self.cause


def retry_after_s(response: httpx.Response) -> float | None:
    """The server's ``Retry-After`` in seconds (a number or an HTTP date), if it sent one."""
    return retry_after_seconds(response.headers.get("Retry-After"))


def post_json(
    http: httpx.Client,
    url: str,
    body: dict[str, JsonValue],
    headers: dict[str, str],
    timeout_s: float,
) -> tuple[dict[str, Any], str]:
    """POST ``body``; the decoded JSON object of a 2xx answer and the body's text.

    Raises :class:`ProviderHttpError` for an error status (retryable or not) or a body that is
    not a JSON object; ``httpx`` timeouts and transport errors pass through to the retry loop.
    """
    response = http.post(url, json=body, headers=headers, timeout=timeout_s)
    text = response.text
    if response.status_code >= 400:
        raise ProviderHttpError(
            f"http_{response.status_code}: {_detail(response)}"[:MAX_DETAIL],
            retryable=response.status_code in RETRYABLE_STATUS,
            retry_after_s=retry_after_s(response),
            status=response.status_code,
            body=text,
        )
    try:
        doc = response.json()
    except ValueError as exc:
        raise bad_reply("the body is not JSON", text) from exc
    if not isinstance(doc, dict):
        raise bad_reply("the body is not a JSON object", text)
    return doc, text


def bad_reply(detail: str, body: str) -> ProviderHttpError:
    """The error of a 2xx answer that carries no usable reply (never retried)."""
    return ProviderHttpError(f"bad_reply: {detail}", retryable=False, body=body)


def _detail(response: httpx.Response) -> str:
    """The error message of an error body (OpenAI and Anthropic nest it in ``error``)."""
    try:
        doc = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return response.reason_phrase
