"""runs: the judge panel a submission asked for.

``runs.panel_id`` is NULL when the submission named no panel (the service's panel, or the task
version's default, judges it).

Revision ID: 0500_run_panel
Revises: 0400_access_sessions
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0500_run_panel"
down_revision = "0400_access_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``runs.panel_id``."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("panel_id", sa.String(length=200), nullable=True))


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("panel_id")
