"""generations: the model call behind each run regua generated.

Revision ID: 0600_generations
Revises: 0510_gate_status
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0600_generations"
down_revision = "0510_gate_status"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``generations`` (one row per generated run; ``case_key`` unique when set)."""
    op.create_table(
        "generations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("api", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("elapsed_ms", sa.Float(), nullable=True),
        sa.Column("finish_reason", sa.String(length=64), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("price_table_version", sa.String(length=100), nullable=True),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("refusal", sa.Boolean(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("cause", sa.Text(), nullable=True),
        sa.Column("mock", sa.Boolean(), nullable=False),
        sa.Column("case_key", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_generations_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_generations")),
        sa.UniqueConstraint("run_id", name=op.f("uq_generations_run_id")),
        sa.UniqueConstraint("case_key", name=op.f("uq_generations_case_key")),
    )


def downgrade() -> None:
    """Drop ``generations`` (the runs and their raw replies stay)."""
    op.drop_table("generations")
