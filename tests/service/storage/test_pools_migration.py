"""Migration ``0710_task_pools`` creates ``task_retirements`` and ``leak_flags`` and drops them."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy.exc import IntegrityError

from service.storage import Database, TaskRetirement
from service.storage.engine import migrations_config

TABLES = {"task_retirements", "leak_flags"}


def test_pool_tables_come_and_go(database_url: str, tmp_path: Path) -> None:
    del tmp_path
    db = Database(database_url)
    try:
        assert set(db.table_names()) >= TABLES
        with db.write() as s:
            s.add(TaskRetirement(task_ref="a@1", retired_by="t", note=""))
        with pytest.raises(IntegrityError), db.write() as s:  # one retirement per ref
            s.add(TaskRetirement(task_ref="a@1", retired_by="u", note=""))
        cfg = migrations_config(db.engine)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0510_gate_status")
        assert not TABLES & set(db.table_names())
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        assert set(db.table_names()) >= TABLES
    finally:
        db.dispose()
