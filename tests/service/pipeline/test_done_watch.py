"""Waiting for a run without polling: the done announcement wakes its waiters, and only them.

Real PostgreSQL (LISTEN/NOTIFY between two connections, as between a worker and an API
process) and SQLite (in-process, after the commit). A rolled-back transaction announces nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from service.pipeline.done_watch import RunWatch, announce_done
from service.storage import Database
from tests.helpers.pg import fresh_pg_database

WAKE_S = 30.0
"""Longest wait for a wake-up that must come (it comes at commit; the bound only ends a hang)."""
QUIET_S = 0.5
"""How long a waiter that must not be woken is watched."""


@pytest.fixture
def pg_db() -> Iterator[Database]:
    for url in fresh_pg_database("regua_watch"):
        db = Database(url)
        try:
            yield db
        finally:
            db.dispose()


async def _woken(event: asyncio.Event, within_s: float) -> bool:
    try:
        await asyncio.wait_for(event.wait(), within_s)
    except TimeoutError:
        return False
    return True


def _finish(db: Database, watch: RunWatch, run_id: str, *, commit: bool = True) -> None:
    """The finalize transaction's announcement, committed or rolled back."""
    try:
        with db.write() as s:
            s.execute(text("SELECT 1"))
            announce_done(s, run_id, watch)
            if not commit:
                raise RuntimeError("the transaction fails")
    except RuntimeError:
        pass


@pytest.mark.postgres
def test_a_notify_from_another_process_wakes_the_runs_waiters_only(pg_db: Database) -> None:
    api_watch = RunWatch(pg_db.url)  # the API process's; the worker below is another one
    worker_watch = RunWatch(None)

    async def go() -> tuple[bool, bool, bool]:
        with api_watch.waiting("run-a") as a, api_watch.waiting("run-b") as b:
            # The listener connects with the first waiter and then wakes every waiter once
            # (announcements missed while it was away). That wake is queued on this loop from
            # the listener's thread: waiting for it to arrive, not for `live`, means no part of
            # it can land after the clear below and pass for an announcement.
            assert await _woken(a, WAKE_S) and await _woken(b, WAKE_S)
            assert api_watch.live
            a.clear()
            b.clear()
            await asyncio.to_thread(_finish, pg_db, worker_watch, "run-a", commit=False)
            rolled_back = await _woken(a, QUIET_S)
            await asyncio.to_thread(_finish, pg_db, worker_watch, "run-a")
            return rolled_back, await _woken(a, WAKE_S), await _woken(b, QUIET_S)

    try:
        assert asyncio.run(go()) == (False, True, False)
    finally:
        api_watch.close()


def test_on_sqlite_the_commit_wakes_the_waiters_of_this_process(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    watch = RunWatch(None)

    async def go() -> tuple[bool, bool, bool]:
        with watch.waiting("run-a") as a:
            await asyncio.to_thread(_finish, db, watch, "run-a", commit=False)
            rolled_back = await _woken(a, QUIET_S)
            await asyncio.to_thread(_finish, db, watch, "run-a")
            return rolled_back, await _woken(a, WAKE_S), watch.live

    try:
        assert asyncio.run(go()) == (False, True, False)  # never "live": quick ticks remain
    finally:
        db.dispose()
