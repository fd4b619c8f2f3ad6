"""The queue's connection pool checks a connection with a round trip only when it must.

procrastinate takes a connection from its pool for every fetch, finish and heartbeat; the pool
the worker gives it (:func:`checked_pool`) skips the check's empty query on a quiet idle
connection and still replaces a backend the server has closed before the queue meets it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from service.pipeline.pgworker import checked_pool
from tests.helpers.pg import terminate_backend

pytestmark = pytest.mark.postgres


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement an async psycopg cursor sends from now on."""
    queries: list[str] = []
    original = psycopg.AsyncCursor.execute

    async def spy(self: psycopg.AsyncCursor[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        queries.append(str(query))
        return await original(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncCursor, "execute", spy)
    return queries


def _libpq(pg_url: str) -> str:
    return pg_url.replace("postgresql+psycopg://", "postgresql://", 1)


async def _pid(pool: Any) -> int:
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        return int(row[0])


def test_a_quiet_connection_is_not_checked_and_a_closed_one_is_replaced(
    pg_url: str, sent: list[str]
) -> None:
    admin = _libpq(pg_url)

    async def scenario() -> None:
        pool = checked_pool(conninfo=admin, min_size=1, max_size=1, open=False)
        await pool.open(wait=True)
        try:
            first = await _pid(pool)
            sent.clear()
            assert await _pid(pool) == first  # the same pooled connection
            assert "" not in sent  # no check's empty query
            await asyncio.to_thread(terminate_backend, admin, first)
            sent.clear()
            replaced = await _pid(pool)  # no error: the check found it gone first
            assert replaced != first
            assert "" in sent  # its readable socket was checked
        finally:
            await pool.close()

    asyncio.run(scenario())
