"""run lanes: each run's estimated render cost, the lane the scheduler gives it, its last claim.

``runs.render_cost`` is the check stage's static estimate of the render's work (captures, in
units of one static frame); ``runs.lane`` is ``cheap`` or ``heavy`` once the run is checked (NULL
before: an unchecked run waits in the cheap lane, the check itself being cheap);
``runs.claimed_at`` is when a worker last claimed the run (the fair claim serves the submitter
served least recently). The indexes serve the fair claim.

Revision ID: 1200_run_lanes
Revises: 1310_leak_overlap
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1200_run_lanes"
down_revision = "1310_leak_overlap"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``runs.lane``, ``runs.render_cost``, ``runs.claimed_at`` and two indexes."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("lane", sa.String(8), nullable=True))
        batch.add_column(sa.Column("render_cost", sa.Float(), nullable=True))
        batch.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_runs_status_lane", "runs", ["status", "lane", "submitted_by"])
    op.create_index("ix_runs_submitter_claimed", "runs", ["submitted_by", "claimed_at"])


def downgrade() -> None:
    """Drop the indexes and the three columns."""
    op.drop_index("ix_runs_submitter_claimed", table_name="runs")
    op.drop_index("ix_runs_status_lane", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("claimed_at")
        batch.drop_column("render_cost")
        batch.drop_column("lane")
