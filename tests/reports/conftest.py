"""Database fixture of the report tests: SQLite always, PostgreSQL when the loopback one answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import fresh_pg_database, reset_pg_schema


@pytest.fixture(scope="module")
def reports_pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this module (dropped afterwards); skips when none answers."""
    yield from fresh_pg_database("regua_reports")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def reports_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite in a temp folder, or an emptied PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'regua.sqlite3'}"
    url: str = request.getfixturevalue("reports_pg_url")
    reset_pg_schema(url)
    return url
