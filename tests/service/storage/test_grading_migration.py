"""Migration ``1400_graded_adjudication``: levels, adjudications and rubric scores come and go."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect

from service.storage import AdjudicationRow, Database
from service.storage.engine import migrations_config

TABLES = {"adjudications", "rubric_scores"}


def _level_columns(db: Database) -> set[str]:
    found = inspect(db.engine)
    return {
        table
        for table in ("verdicts", "criterion_outcomes")
        if "level" in {c["name"] for c in found.get_columns(table)}
    }


def test_grading_tables_and_level_columns_come_and_go(database_url: str) -> None:
    db = Database(database_url)
    try:
        assert set(db.table_names()) >= TABLES
        assert _level_columns(db) == {"verdicts", "criterion_outcomes"}
        assert AdjudicationRow.__tablename__ == "adjudications"
        cfg = migrations_config(db.engine)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "1000_gate_set_size")
        assert not TABLES & set(db.table_names())
        assert _level_columns(db) == set()
        assert "task_proposals" in db.table_names()  # the migrations before it stay
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        assert set(db.table_names()) >= TABLES
        assert _level_columns(db) == {"verdicts", "criterion_outcomes"}
    finally:
        db.dispose()
