"""model calls: every generation model call recorded before it is sent, marked done when stored.

``model_calls`` holds one row per send of one call (the first answer of a case is round 0, each
revision round its own round): the job (a generation job or an experiment), the case key, the
round, the send (``attempt``: 1, then 2 for a call sent again after a kill, ...), the
``Idempotency-Key`` sent with it and when; ``done_at`` and ``run_id`` once its answer is stored.
A row of attempt 2 or more is a call sent again.

Revision ID: 1520_model_calls
Revises: 1510_generation_jobs
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1520_model_calls"
down_revision = "1510_generation_jobs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``model_calls``."""
    op.create_table(
        "model_calls",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job", sa.String(200), nullable=False),
        sa.Column("case_key", sa.String(200), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(80), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("run_id", sa.String(32), nullable=True),
        sa.UniqueConstraint("idempotency_key", "attempt", name="uq_model_calls_send"),
    )
    op.create_index("ix_model_calls_job", "model_calls", ["job"])


def downgrade() -> None:
    """Drop ``model_calls``."""
    op.drop_index("ix_model_calls_job", table_name="model_calls")
    op.drop_table("model_calls")
