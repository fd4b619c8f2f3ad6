"""gate decisions say trusted / not trusted / inconclusive, and what would decide them.

Existing rows get their status from ``passed`` (passed: ``trusted``, else ``not_trusted``);
``needs`` (how many more labels of which class would decide an inconclusive criterion) is empty.

Revision ID: 0510_gate_status
Revises: 0500_run_panel
"""

from __future__ import annotations

from alembic import op

from service.storage.migrations.ddl import add_columns, drop_columns

revision = "0510_gate_status"
down_revision = "0500_run_panel"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``gate_decisions.status`` and ``gate_decisions.needs`` and fill the status."""
    add_columns("gate_decisions", "status str(16) null", "needs json null")
    op.execute(
        "UPDATE gate_decisions SET status = CASE WHEN passed THEN 'trusted' ELSE 'not_trusted' END"
    )


def downgrade() -> None:
    """Drop the columns (``passed`` still says which decisions let a judge vote)."""
    drop_columns("gate_decisions", "needs", "status")
