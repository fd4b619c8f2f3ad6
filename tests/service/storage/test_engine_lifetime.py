"""A Database's pooled connections are closed even when a caller drops it without dispose().

What was seen: on CI, psycopg's "connection was deleted while still open" surfaced as an error in
the set-up of an unrelated test, whenever the garbage collector happened to reach an engine some
earlier code had dropped (a failed migration, an error path that skipped ``dispose``).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from service.storage import Database


@pytest.fixture
def unraisable() -> Iterator[list[Any]]:
    """What finalizers raised meanwhile (psycopg's ResourceWarning is one, under -W error)."""
    seen: list[Any] = []
    before = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        yield seen
    finally:
        sys.unraisablehook = before


def _server_connections(db: Database) -> int:
    with db.read() as s:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        return int(s.scalar(text(query)) or 0)


@pytest.mark.postgres
def test_a_dropped_database_closes_its_pooled_connections(
    pg_url: str, unraisable: list[Any]
) -> None:
    watcher = Database(pg_url)
    baseline = _server_connections(watcher)  # the watcher's own connection
    dropped = Database(pg_url)
    with dropped.read() as s, dropped.read() as s2:  # two pooled connections
        assert s.scalar(text("SELECT 1")) == s2.scalar(text("SELECT 1")) == 1
    assert _server_connections(watcher) == baseline + 2
    del dropped, s, s2
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []
    assert _server_connections(watcher) == baseline
    watcher.dispose()
