"""Migration ``0600_generations`` creates and drops its table on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic import command

from service.storage import Database
from service.storage.engine import migrations_config


def test_generations_table_comes_and_goes(database_url: str) -> None:
    db = Database(database_url)
    assert "generations" in db.table_names()
    cfg = migrations_config(db.engine)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0510_gate_status")
    assert "generations" not in db.table_names() and "runs" in db.table_names()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    assert "generations" in db.table_names()
    db.dispose()
