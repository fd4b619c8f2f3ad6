"""Migrations ``1500_run_revisions`` and ``1510_task_proposals`` create and drop their tables on
SQLite and PostgreSQL, and the runs, tasks and artifacts they point at stay."""

from __future__ import annotations

from alembic import command

from service.storage import Database
from service.storage.engine import migrations_config

REVISIONS = {"run_revisions"}
PROPOSALS = {"task_proposals", "task_proposal_decisions"}


def _move(db: Database, where: str, up: bool) -> set[str]:
    cfg = migrations_config(db.engine)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        (command.upgrade if up else command.downgrade)(cfg, where)
    return set(db.table_names())


def test_workflow_tables_come_and_go(database_url: str) -> None:
    db = Database(database_url)
    try:
        assert set(db.table_names()) >= REVISIONS | PROPOSALS
        tables = _move(db, "1500_run_revisions", up=False)
        assert not PROPOSALS & tables and tables >= REVISIONS
        tables = _move(db, "0920_render_cost", up=False)
        assert not (REVISIONS | PROPOSALS) & tables
        assert {"runs", "artifacts", "task_versions"} <= tables
        tables = _move(db, "head", up=True)
        assert tables >= REVISIONS | PROPOSALS
    finally:
        db.dispose()
