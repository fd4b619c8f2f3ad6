"""The tests' migrated SQLite template (``tests/helpers/migrated.py``): a fresh database opened in
a test has exactly the schema the real migrations give, and one that is not empty is left alone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import Engine

from service.storage import Database
from tests.helpers.migrated import REAL_UPGRADE, Template


def _schema(path: Path) -> list[tuple[str, str, list[str]]]:
    """Every table and index with its definition's lines in order of their text: the migrations
    themselves (SQLite's batch table copies) list a table's constraints in a different order from
    one run to the next."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        return [
            (str(t), str(n), sorted(ln.strip(" ,") for ln in str(s).splitlines()))
            for t, n, s in rows
        ]


def test_a_fresh_database_has_the_schema_of_the_migrations(tmp_path: Path) -> None:
    copied = tmp_path / "copied.sqlite3"
    Database(f"sqlite:///{copied}").dispose()  # through the template
    real = tmp_path / "real.sqlite3"
    db = Database(f"sqlite:///{real}", migrate=False)
    try:
        REAL_UPGRADE(db.engine)  # every migration, one by one
    finally:
        db.dispose()
    assert len(_schema(real)) > 20
    assert _schema(copied) == _schema(real)
    with sqlite3.connect(copied) as a, sqlite3.connect(real) as b:
        query = "SELECT version_num FROM alembic_version"
        assert a.execute(query).fetchall() == b.execute(query).fetchall() != []


def test_a_database_that_is_not_empty_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE mine (x INTEGER)")
    upgraded: list[str] = []

    def upgrade(engine: Engine) -> None:
        upgraded.append(str(engine.url))

    template = Template(tmp_path / "never-made", upgrade)
    db = Database(f"sqlite:///{path}", migrate=False)
    try:
        template.upgrade(db.engine)
    finally:
        db.dispose()
    assert _schema(path) == [("table", "mine", ["CREATE TABLE mine (x INTEGER)"])]
    assert upgraded == [f"sqlite:///{path}"]  # the real upgrade still runs on it
    assert not template.path.exists()
