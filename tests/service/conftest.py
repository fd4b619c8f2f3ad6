"""Fixtures of the service tests: databases (SQLite always, PostgreSQL when it answers),
service contexts with fake components, and HTTP clients with tokens of every role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from regua.settings import Settings
from service.api import create_app
from service.auth import create_token
from service.context import ServiceContext
from tests.pg import fresh_pg_database, reset_pg_schema
from tests.service.fakes import fake_components


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a fresh PostgreSQL database for the session (skips when none answers)."""
    yield from fresh_pg_database("regua_test")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite in a temp folder, or a fresh schema-less database on the loopback PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'regua.sqlite3'}"
    url: str = request.getfixturevalue("pg_url")
    _reset_pg(url)
    return url


_reset_pg = reset_pg_schema


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings with a temp data folder and the parametrised database."""
    return Settings(data_dir=tmp_path / "data", database_url=database_url, queue_capacity=50)


@pytest.fixture
def ctx(settings: Settings) -> Iterator[ServiceContext]:
    """A service context with fake components (no executor started)."""
    context = ServiceContext.open(settings, fake_components)
    context.components = fake_components(settings)
    yield context
    context.close()


class Api:
    """A TestClient plus one token per role."""

    def __init__(self, client: TestClient, ctx: ServiceContext) -> None:
        self.client = client
        self.ctx = ctx
        self.tokens = {role: create_token(ctx.db, role, role)[0] for role in ("admin", "reviewer")}
        self.tokens["submitter"] = create_token(ctx.db, "submitter", "alice")[0]
        self.tokens["other"] = create_token(ctx.db, "submitter", "bob")[0]

    def h(self, role: str) -> dict[str, str]:
        """Authorization header for a role."""
        return {"Authorization": f"Bearer {self.tokens[role]}"}


@pytest.fixture
def api(ctx: ServiceContext) -> Iterator[Api]:
    """The app over ``ctx`` (executor not running: runs stay queued unless a test drives it)."""
    with TestClient(create_app(ctx)) as client:
        yield Api(client, ctx)
