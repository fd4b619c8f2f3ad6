"""gate set size: how many labelled items each gate decision was measured on.

A new decision that would demote a trusted judge is compared with the size of the set that
earned the trusted one (a smaller set is refused unless asked to replace). Rows stored before
this column read their size from their metrics (``n_items - n_disputed``).

Revision ID: 1000_gate_set_size
Revises: 1510_task_proposals
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1000_gate_set_size"
down_revision = "1510_task_proposals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``gate_decisions.set_size``."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.add_column(sa.Column("set_size", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop it."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.drop_column("set_size")
