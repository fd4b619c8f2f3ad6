"""Review test fixtures: the database URL (SQLite always, PostgreSQL when it answers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import fresh_pg_database, reset_pg_schema


@pytest.fixture(scope="session")
def review_pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for the session (dropped afterwards); skips without one."""
    yield from fresh_pg_database("regua_review")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite in a temp folder, or an emptied database on the loopback PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'regua.sqlite3'}"
    url: str = request.getfixturevalue("review_pg_url")
    reset_pg_schema(url)
    return url
