"""Fixtures shared by every test area. Area fixtures live in tests/<area>/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.pg import fresh_pg_database, reset_pg_schema
from tests.helpers.ports import HOST, dead_port

pytest_plugins = [
    "tests.helpers.migrated",
    "tests.helpers.render_pool",
    "tests.helpers.s3",
    "tests.helpers.xdist",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPORA = REPO_ROOT.parent / "shared" / "corpora"
SAMPLES = REPO_ROOT / "samples"


def corpus_dir(name: str) -> Path:
    """Path of ``../shared/corpora/<name>``; skips the test with a clear reason when absent."""
    path = SHARED_CORPORA / name
    if not path.is_dir():
        pytest.skip(
            f"external corpus {name!r} not found at {path} (../shared is absent in this checkout; "
            "CI provides it)"
        )
    return path


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """The project's own bundled sample outputs."""
    return SAMPLES


@pytest.fixture(autouse=True)
def _close_opened_databases() -> Iterator[None]:
    """Close the databases a test opened through the seeding helpers (no leaked connection)."""
    yield
    from tests.helpers.review_runs import dispose_opened

    dispose_opened()


@pytest.fixture
def refused_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` where every connection is refused for the whole test (the port
    is held bound, not listening, so no other worker's server can take it meanwhile)."""
    with dead_port() as port:
        yield f"http://{HOST}:{port}"


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a fresh PostgreSQL database for the session (skips when none answers)."""
    yield from fresh_pg_database("regua_test")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The one database fixture: SQLite in a temp folder, or an emptied schema on the loopback
    PostgreSQL (every test that takes it runs on both)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'regua.sqlite3'}"
    url: str = request.getfixturevalue("pg_url")
    reset_pg_schema(url)
    return url
