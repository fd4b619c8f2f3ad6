"""The client's bounded back-off against a real HTTP server that answers 429 and 503.

A small app on a uvicorn thread refuses the first requests as told, then accepts; the client
must wait as the answer says (``Retry-After`` in seconds or as an HTTP date, else its own
exponential back-off), stop after its bound with an :class:`ApiError`, and never retry what is
not a "not now" answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from regua.client import ApiError, AsyncClient, Backoff, Client, RunInput
from regua.client.transport import retry_after_s
from tests.helpers.server import serve_in_thread

FAST = Backoff(max_attempts=5, max_wait_s=30, base_s=0.01, max_delay_s=0.05)


@dataclass
class Script:
    """What the server answers next: a list of (status, Retry-After) before it accepts."""

    refusals: list[tuple[int, str | None]] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)


def _app(script: Script) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/runs")
    async def submit(request: Request) -> JSONResponse:
        script.seen.append((await request.json())["model"]["label"])
        if script.refusals:
            status, after = script.refusals.pop(0)
            headers = {"Retry-After": after} if after is not None else {}
            return JSONResponse({"detail": "not now"}, status_code=status, headers=headers)
        return JSONResponse({"run_id": f"r{len(script.seen)}", "status": "queued"}, 202)

    @app.get("/v1/runs/{run_id}")
    def missing(run_id: str) -> JSONResponse:
        return JSONResponse({"detail": f"no run {run_id}"}, status_code=404)

    @app.get("/v1/artifacts/{sha256}")
    def artifact(sha256: str) -> Response:
        if sha256 == "ab" * 32:
            return Response(b"\x89PNG bytes", media_type="image/png")
        return JSONResponse({"detail": "no such artifact"}, status_code=404)

    return app


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Script]]:
    """The scripted app on a real server (one per module)."""
    script = Script()
    with serve_in_thread(_app(script)) as url:
        yield url, script


def _run(label: str) -> RunInput:
    return RunInput(task="t@1", output="<svg/>", model=label)


def test_429_and_503_are_waited_out_then_accepted(served: tuple[str, Script]) -> None:
    url, script = served
    script.seen.clear()
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=1), usegmt=True)
    script.refusals[:] = [(429, "0"), (503, None), (429, soon)]
    with Client(url, "tok", backoff=FAST) as client:
        accepted = client.submit(_run("a"))
    assert accepted.run_id == "r4" and accepted.status == "queued"
    assert script.seen == ["a"] * 4


def test_the_bound_ends_in_an_api_error(served: tuple[str, Script]) -> None:
    url, script = served
    script.seen.clear()
    script.refusals[:] = [(429, "0")] * 10
    with Client(url, "tok", backoff=FAST) as client, pytest.raises(ApiError) as err:
        client.submit(_run("b"))
    assert err.value.status == 429 and "not now" in str(err.value)
    assert len(script.seen) == FAST.max_attempts


def test_other_errors_are_not_retried(served: tuple[str, Script]) -> None:
    url, script = served
    script.refusals[:] = [(400, None), (429, "0")]
    script.seen.clear()
    with Client(url, "tok", backoff=FAST) as client:
        with pytest.raises(ApiError) as err:
            client.submit(_run("c"))
        assert err.value.status == 400 and script.seen == ["c"]
        with pytest.raises(ApiError) as missing:
            client.run("nope")
        assert missing.value.status == 404
        assert client.artifact("ab" * 32) == b"\x89PNG bytes"
        with pytest.raises(ApiError, match="no such artifact"):
            client.artifact("cd" * 32)


def test_the_async_client_waits_the_same_way(served: tuple[str, Script]) -> None:
    url, script = served
    script.seen.clear()
    script.refusals[:] = [(429, "0"), (503, "0")]

    async def go() -> str:
        async with AsyncClient(url, "tok", backoff=FAST) as client:
            return (await client.submit(_run("d"))).run_id

    assert asyncio.run(go()) == "r3"
    assert script.seen == ["d"] * 3


def test_retry_after_reads_seconds_and_dates() -> None:
    assert retry_after_s("7") == 7.0
    assert retry_after_s("-3") == 0.0
    assert retry_after_s(None) is None and retry_after_s("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    got = retry_after_s(later)
    assert got is not None and 80 < got <= 90
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=90), usegmt=True)
    assert retry_after_s(past) == 0.0


def test_no_token_is_a_configuration_error() -> None:
    from regua.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="no API token"):
        Client("http://127.0.0.1:9", None)
