"""Migration ``0510_gate_status``: decisions stored before it read as trusted / not trusted, and
the evaluator's eligibility (``GateTable``) gives a vote only to a trusted decision."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import text

import judges
from service.evaluation.gate import gate_table, stored_decisions
from service.storage import Database
from service.storage.engine import migrations_config

OLD_ROW = (
    "INSERT INTO gate_decisions (profile_id, profile_hash, criterion, task_family, passed, "
    "reasons, metrics, thresholds, gate_id, set_id, split_seed, decided_at, created_at) VALUES "
    "(:p, NULL, :c, 'pelican-bicycle', :passed, '[]', '{}', '{}', 'regua-gate@1', 's', 1, "
    "'2026-01-01', '2026-01-01 00:00:00')"
)


def test_old_decisions_get_a_status_and_only_trusted_votes(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    cfg = migrations_config(db.engine)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0400_access_sessions")
    columns = {r[1] for r in db.engine.connect().execute(text("PRAGMA table_info(gate_decisions)"))}
    assert "status" not in columns
    with db.engine.begin() as conn:
        conn.execute(text(OLD_ROW), {"p": "geometry@1", "c": "R1", "passed": True})
        conn.execute(text(OLD_ROW), {"p": "geometry@1", "c": "R2", "passed": False})
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    with db.read() as s:
        decisions = {d.criterion: d for d in stored_decisions(s)}
        table = gate_table(s)
    assert (decisions["R1"].status, decisions["R1"].needs) == ("trusted", ())
    assert decisions["R2"].status == "not_trusted"
    profile = judges.get_profile("geometry@1")
    assert table(profile, "R1", "pelican-bicycle") and not table(profile, "R2", "pelican-bicycle")
    db.dispose()
