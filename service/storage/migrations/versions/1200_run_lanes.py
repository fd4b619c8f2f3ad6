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

from alembic import op

from service.storage.migrations.ddl import add_columns, create_indexes, drop_columns

revision = "1200_run_lanes"
down_revision = "1310_leak_overlap"


def upgrade() -> None:
    """Add ``runs.lane``, ``runs.render_cost``, ``runs.claimed_at`` and two indexes."""
    add_columns("runs", "lane str(8) null", "render_cost float null", "claimed_at datetime null")
    create_indexes(
        "runs",
        "status lane submitted_by as ix_runs_status_lane",
        "submitted_by claimed_at as ix_runs_submitter_claimed",
    )


def downgrade() -> None:
    """Drop the indexes and the three columns."""
    op.drop_index("ix_runs_submitter_claimed", table_name="runs")
    op.drop_index("ix_runs_status_lane", table_name="runs")
    drop_columns("runs", "claimed_at", "render_cost", "lane")
