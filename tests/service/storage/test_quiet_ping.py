"""The pool's pre-ping skips the round trip on a quiet idle connection, and still catches a
backend the server has closed (a restart, ``pg_terminate_backend``) before a session meets it."""

from __future__ import annotations

import select
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import InvalidatePoolError

from service.storage import Database
from service.storage.engine import pre_ping
from tests.helpers.pg import terminate_backend

pytestmark = pytest.mark.postgres


@pytest.fixture
def db(pg_url: str) -> Iterator[Database]:
    database = Database(pg_url, migrate=False)
    yield database
    database.dispose()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement psycopg sends from now on."""
    queries: list[str] = []
    original = psycopg.Cursor.execute

    def spy(self: psycopg.Cursor[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        queries.append(str(query))
        return original(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", spy)
    return queries


def _backend_pid(db: Database) -> int:
    with db.read() as session:
        return int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_a_quiet_pooled_connection_is_not_pinged(db: Database, sent: list[str]) -> None:
    first = _backend_pid(db)
    sent.clear()
    assert _backend_pid(db) == first  # the same pooled connection
    assert ";" not in sent


def test_a_terminated_backend_is_caught_before_the_session(
    db: Database, pg_url: str, sent: list[str]
) -> None:
    gone = _backend_pid(db)
    terminate_backend(pg_url, gone)
    sent.clear()
    with db.write() as session:  # no error: the pool replaced the dead connection first
        now = int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())
    assert now != gone
    assert ";" in sent  # the readable socket was pinged


def test_a_live_connection_with_something_to_read_gets_the_real_ping(
    db: Database, pg_url: str, sent: list[str]
) -> None:
    admin = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn, psycopg.connect(admin) as other:
        conn.execute("LISTEN regua_ping_test")
        other.execute("NOTIFY regua_ping_test")
        other.commit()
        poller = select.poll()
        poller.register(conn.pgconn.socket, select.POLLIN)
        assert poller.poll(10_000), "the notification did not arrive"
        sent.clear()
        pre_ping(db.engine.dialect)(conn, None, None)  # alive: no error, the pool keeps it
        assert ";" in sent


def test_a_closed_connection_has_the_pool_drop_its_connections(db: Database, pg_url: str) -> None:
    admin = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)
    conn = psycopg.connect(admin, autocommit=True)
    conn.close()
    with pytest.raises(InvalidatePoolError):
        pre_ping(db.engine.dialect)(conn, None, None)
