"""experiments and their generated cases.

Revision ID: 0610_experiments
Revises: 0600_generations
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0610_experiments"
down_revision = "0600_generations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``experiments`` and ``experiment_cases``."""
    op.create_table(
        "experiments",
        sa.Column("id", sa.String(length=250), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("window", sa.String(length=100), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("spec_hash", sa.String(length=64), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "created_by",
            sa.Integer(),
            sa.ForeignKey("api_tokens.id", name=op.f("fk_experiments_created_by_api_tokens")),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiments")),
    )
    op.create_index(op.f("ix_experiments_name"), "experiments", ["name"])
    op.create_table(
        "experiment_cases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "experiment_id",
            sa.String(length=250),
            sa.ForeignKey(
                "experiments.id", name=op.f("fk_experiment_cases_experiment_id_experiments")
            ),
            nullable=False,
        ),
        sa.Column("case_key", sa.String(length=500), nullable=False),
        sa.Column("arm", sa.String(length=100), nullable=False),
        sa.Column("item", sa.String(length=200), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=False),
        sa.Column(
            "run_id",
            sa.String(length=32),
            sa.ForeignKey("runs.id", name=op.f("fk_experiment_cases_run_id_runs")),
            nullable=False,
        ),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiment_cases")),
        sa.UniqueConstraint("case_key", name=op.f("uq_experiment_cases_case_key")),
    )
    op.create_index(
        op.f("ix_experiment_cases_experiment_id"), "experiment_cases", ["experiment_id"]
    )
    op.create_index(op.f("ix_experiment_cases_run_id"), "experiment_cases", ["run_id"])


def downgrade() -> None:
    """Drop both tables."""
    op.drop_table("experiment_cases")
    op.drop_table("experiments")
