"""generation jobs: every generation job stored, so any process reports it and any worker runs it.

``generation_jobs`` holds the request of ``POST /v1/generations`` (task, model parameters,
repeats, revision rounds, token), its state (``running``, ``done``, ``failed``, ``interrupted``)
and its progress; the embedded job runner and the procrastinate ``generate`` queue both run it
from this row.

Revision ID: 1510_generation_jobs
Revises: 1200_run_lanes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1510_generation_jobs"
down_revision = "1200_run_lanes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``generation_jobs``."""
    op.create_table(
        "generation_jobs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("task", sa.String(200), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("repeats", sa.Integer(), nullable=False),
        sa.Column("revise", sa.Integer(), nullable=False),
        sa.Column("revise_findings", sa.Boolean(), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("rounds_done", sa.Integer(), nullable=False),
        sa.Column("run_ids", sa.JSON(), nullable=False),
        sa.Column("chains", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_generation_jobs_token_id", "generation_jobs", ["token_id"])
    op.create_index("ix_generation_jobs_state", "generation_jobs", ["state"])


def downgrade() -> None:
    """Drop ``generation_jobs``."""
    op.drop_index("ix_generation_jobs_state", table_name="generation_jobs")
    op.drop_index("ix_generation_jobs_token_id", table_name="generation_jobs")
    op.drop_table("generation_jobs")
