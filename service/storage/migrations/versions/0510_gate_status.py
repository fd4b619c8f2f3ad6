"""gate decisions say trusted / not trusted / inconclusive, and what would decide them.

Existing rows get their status from ``passed`` (passed: ``trusted``, else ``not_trusted``);
``needs`` (how many more labels of which class would decide an inconclusive criterion) is empty.

Revision ID: 0510_gate_status
Revises: 0500_run_panel
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0510_gate_status"
down_revision = "0500_run_panel"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``gate_decisions.status`` and ``gate_decisions.needs`` and fill the status."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.add_column(sa.Column("status", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("needs", sa.JSON(), nullable=True))
    op.execute(
        "UPDATE gate_decisions SET status = CASE WHEN passed THEN 'trusted' ELSE 'not_trusted' END"
    )


def downgrade() -> None:
    """Drop the columns (``passed`` still says which decisions let a judge vote)."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.drop_column("needs")
        batch.drop_column("status")
