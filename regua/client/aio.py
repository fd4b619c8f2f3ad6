"""The asynchronous client: :class:`AsyncClient` (the twin of :class:`regua.client.Client`)."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import httpx
from tenacity import AsyncRetrying

from regua.client.common import ClientBase
from regua.client.methods import Methods, Plan, Steps
from regua.client.transport import AsyncServiceHttp, Call, decoded, read

T = TypeVar("T")


class AsyncClient(Methods, ClientBase[httpx.AsyncBaseTransport, AsyncServiceHttp]):
    """The async twin of :class:`regua.client.Client`: the same methods, awaited.

    ``AsyncClient(url, token, timeout_s=60.0, backoff=None, transport=None)``, what
    :class:`~regua.client.common.ClientBase` says. Use as ``async with AsyncClient(...)``.
    """

    def open_http(
        self, transport: httpx.AsyncBaseTransport | None, **session: Any
    ) -> AsyncServiceHttp:
        """An asynchronous HTTP session."""
        return AsyncServiceHttp(transport=transport, **session)

    async def close(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        """Use as ``async with AsyncClient(...) as client:`` (closed on exit)."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the connection pool."""
        await self.close()

    async def send(self, call: Call[T]) -> T:
        """Send one call (retrying 429 and 503) and read its answer."""
        retrying = AsyncRetrying(sleep=asyncio.sleep, **self.backoff.tenacity_args())
        answer: httpx.Response = await retrying(
            self.http.request, call.method, call.path, params=call.query(), json=call.json
        )
        return read(call, answer)

    async def perform(self, plan: Plan[T]) -> T:
        """Carry out a method's plan, awaited: send its calls, sleep its pauses; its result."""
        steps, answer = Steps(plan), None
        while (step := steps.next(answer)) is not None:
            answer = None
            if isinstance(step, Call):
                answer = await self.send(step)
            else:
                await asyncio.sleep(step.seconds)
        return steps.result

    async def artifact(self, sha256: str) -> bytes:
        """One stored artifact's bytes."""
        answer = await self.http.get(f"/v1/artifacts/{sha256}")
        if answer.status_code >= 400:
            decoded(answer)
        return answer.content
