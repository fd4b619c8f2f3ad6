"""``Retry-After`` as seconds or as an HTTP date; anything else is no wait from the server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from regua.llm.http import retry_after_s


def _response(value: str | None) -> httpx.Response:
    headers = {"Retry-After": value} if value is not None else {}
    return httpx.Response(429, headers=headers)


def test_seconds_dates_and_junk() -> None:
    assert retry_after_s(_response("2.5")) == 2.5
    assert retry_after_s(_response("-3")) == 0.0
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert retry_after_s(_response(soon)) == pytest.approx(30, abs=2)
    assert retry_after_s(_response("soon, maybe")) is None
    assert retry_after_s(_response(None)) is None
