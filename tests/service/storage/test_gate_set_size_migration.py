"""Migration ``1000_gate_set_size``: ``gate_decisions.set_size`` comes and goes, and a decision
stored before it reads its size from its metrics (labelled items: items minus disputed)."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from service.evaluation.gate import stored_decisions
from service.storage import Database
from service.storage.engine import migrations_config

OLD_ROW = (
    "INSERT INTO gate_decisions (profile_id, profile_hash, criterion, task_family, passed, status, "
    "needs, reasons, metrics, thresholds, gate_id, set_id, split_seed, decided_at, created_at) "
    "VALUES ('geometry@1', NULL, 'R2', 'pelican-bicycle', :passed, 'trusted', '[]', '[]', "
    ":metrics, '{}', 'regua-gate@1', 'bundled', 1, '2026-01-01T00:00:00Z', "
    "'2026-01-01 00:00:00')"
)


def _columns(db: Database) -> set[str]:
    return {c["name"] for c in inspect(db.engine).get_columns("gate_decisions")}


def test_set_size_comes_and_goes_and_old_rows_read_it_from_their_metrics(
    database_url: str,
) -> None:
    db = Database(database_url)
    try:
        assert "set_size" in _columns(db)
        cfg = migrations_config(db.engine)
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "1510_task_proposals")
        assert "set_size" not in _columns(db)
        with db.engine.begin() as conn:
            metrics = '{"n_items": 150, "n_disputed": 3}'
            conn.execute(text(OLD_ROW), {"passed": True, "metrics": metrics})
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        assert "set_size" in _columns(db)
        with db.read() as s:
            (decision,) = stored_decisions(s)
        assert decision.set_size == 147 and decision.status == "trusted"
    finally:
        db.dispose()
