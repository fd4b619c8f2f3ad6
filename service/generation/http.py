"""One HTTP attempt to a model API, its error statuses turned into :class:`ProviderHttpError`."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import JsonValue

from service.generation.provider import ProviderHttpError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt (rate limits, overload, server errors)."""


def retry_after_s(response: httpx.Response) -> float | None:
    """The server's ``Retry-After`` in seconds (a number or an HTTP date), if it sent one."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def post_json(
    http: httpx.Client,
    url: str,
    body: dict[str, JsonValue],
    headers: dict[str, str],
    timeout_s: float,
) -> dict[str, Any]:
    """POST ``body`` and return the decoded JSON object of a 2xx answer.

    Raises :class:`ProviderHttpError` for an error status (retryable or not) or a body that is
    not a JSON object; ``httpx`` timeouts and transport errors pass through to the retry loop.
    """
    response = http.post(url, json=body, headers=headers, timeout=timeout_s)
    if response.status_code >= 400:
        detail = _detail(response)
        raise ProviderHttpError(
            f"http_{response.status_code}: {detail}"[:500],
            retryable=response.status_code in RETRYABLE_STATUS,
            retry_after_s=retry_after_s(response),
        )
    try:
        doc = response.json()
    except ValueError as exc:
        raise ProviderHttpError("bad_reply: the body is not JSON", retryable=False) from exc
    if not isinstance(doc, dict):
        raise ProviderHttpError("bad_reply: the body is not a JSON object", retryable=False)
    return doc


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


def count(value: object) -> int | None:
    """A token count from a usage field (None when absent or not a whole number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
