"""gate decisions say trusted / not trusted / inconclusive, and what would decide them.

Existing rows get their status from ``passed`` (passed: ``trusted``, else ``not_trusted``);
``needs`` (how many more labels of which class would decide an inconclusive criterion) is empty.
The downgrade drops both columns (``passed`` still says which decisions let a judge vote).

Revision ID: 0510_gate_status
Revises: 0500_run_panel
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "0510_gate_status"
down_revision = "0500_run_panel"

upgrade, downgrade = adding_columns(
    "gate_decisions",
    "status str(16) null",
    "needs json null",
    fill="UPDATE gate_decisions SET status = "
    "CASE WHEN passed THEN 'trusted' ELSE 'not_trusted' END",
)
