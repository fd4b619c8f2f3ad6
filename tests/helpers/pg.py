"""PostgreSQL helpers shared by the test areas: a fresh database per session or module on the
loopback server (skipping with a clear reason when none answers), and an emptied schema per test."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

PG_ADMIN_URL = os.environ.get("REGUA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def fresh_pg_database(prefix: str) -> Iterator[str]:
    """Create a database named ``<prefix>_<random>``, yield its SQLAlchemy URL, drop it after."""
    try:
        import psycopg

        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except Exception as exc:
        pytest.skip(f"PostgreSQL does not answer at {PG_ADMIN_URL}: {exc}")
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        try:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.OperationalError:  # the server was restarted meanwhile (queue fault tests)
            admin.close()
            admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=10)
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def reset_pg_schema(url: str) -> None:
    """Drop and re-create the public schema, so migrations start from nothing."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def terminate_backend(pg_url: str, pid: int) -> None:
    """End the server backend ``pid`` (as a restart or an admin would) and wait until it is gone.

    ``pg_url``: any URL of the server (SQLAlchemy's ``postgresql+psycopg://`` or libpq's).
    """
    import psycopg

    admin = pg_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 10
        while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, "the terminated backend did not end"
            time.sleep(0.02)
