"""The migration history keeps one head, and ``0200_calibration`` creates (and drops) its tables."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.script import ScriptDirectory

from service.storage import Database
from service.storage.engine import migrations_config

TABLES = {"calibration_runs", "gate_decisions", "rescore_batches", "rescore_items"}


def test_one_head_and_the_tables_come_and_go(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    cfg = migrations_config(db.engine)
    heads = ScriptDirectory.from_config(cfg).get_heads()
    assert len(heads) == 1, f"several migration heads: {heads}"
    assert set(db.table_names()) >= TABLES
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0100_review")
    assert not TABLES & set(db.table_names())
    assert "review_items" in db.table_names()
    db.dispose()
