"""Fresh SQLite databases start as a copy of one migrated template (per pytest process).

Loaded by ``tests/conftest.py`` (``pytest_plugins``). Opening a ``Database`` runs every migration
on a fresh file: about 0.1 CPU s each time (SQLite alters most tables by copying them), paid by
hundreds of tests, a third of the CPU of the in-process API tests. Here each pytest process runs
the real migrations once, on a template file, and an empty SQLite file a test opens is first
filled with a copy of it (SQLite's backup API, a few milliseconds). The real ``upgrade`` still
runs on every database afterwards (a no-op at the newest migration), and a database that is not
empty (an older schema a migration test built, a file a server left) is never touched.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from service.storage import engine as storage_engine

REAL_UPGRADE = storage_engine.upgrade
"""The product's ``upgrade`` (every migration, on any database)."""


class Template:
    """The process's migrated template file, made on first use."""

    def __init__(self, folder: Path, upgrade: Callable[[Engine], None]) -> None:
        self.path = folder / "migrated.sqlite3"
        self._upgrade = upgrade
        self._lock = threading.Lock()
        self._made = False

    def file(self) -> Path:
        """The template's path (migrated now when it was not yet)."""
        with self._lock:
            if not self._made:
                db = storage_engine.Database(f"sqlite:///{self.path}", migrate=False)
                try:
                    self._upgrade(db.engine)
                finally:
                    db.dispose()
                self._made = True
        return self.path

    def upgrade(self, engine: Engine) -> None:
        """Copy the template into an empty SQLite file, then run the real upgrade."""
        database = engine.url.database
        if engine.dialect.name == "sqlite" and database and database != ":memory:":
            self._fill_if_empty(engine)
        self._upgrade(engine)

    def _fill_if_empty(self, engine: Engine) -> None:
        raw = engine.raw_connection()
        try:
            target = raw.driver_connection
            assert isinstance(target, sqlite3.Connection)
            if target.execute("SELECT count(*) FROM sqlite_master").fetchone() != (0,):
                return
            source = sqlite3.connect(self.file())
            try:
                source.backup(target)
            finally:
                source.close()
        finally:
            raw.close()


@pytest.fixture(scope="session", autouse=True)
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every ``Database`` this process opens on an empty SQLite file starts from the template."""
    template = Template(tmp_path_factory.mktemp("migrated"), REAL_UPGRADE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage_engine, "upgrade", template.upgrade)
        yield template.path
