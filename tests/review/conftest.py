"""Review test fixtures: the database URL (SQLite always, PostgreSQL when it answers)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ADMIN_URL = os.environ.get("REGUA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="session")
def review_pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for the session (dropped afterwards); skips without one."""
    try:
        import psycopg

        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=3)
    except Exception as exc:
        pytest.skip(f"PostgreSQL does not answer at {PG_ADMIN_URL}: {exc}")
    name = f"regua_review_{uuid.uuid4().hex[:10]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite in a temp folder, or an emptied database on the loopback PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'regua.sqlite3'}"
    url: str = request.getfixturevalue("review_pg_url")
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url
