"""pairwise comparisons (both orders, raw replies as artifacts) and human preferences.

Revision ID: 0620_pairwise
Revises: 0610_experiments
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0620_pairwise"
down_revision = "0610_experiments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``pairwise_comparisons`` and ``pairwise_preferences``."""
    op.create_table(
        "pairwise_comparisons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=False),
        sa.Column("criterion", sa.String(length=100), nullable=False),
        sa.Column("judge_id", sa.String(length=200), nullable=False),
        sa.Column("a_run_id", sa.String(length=32), nullable=True),
        sa.Column("b_run_id", sa.String(length=32), nullable=True),
        sa.Column("a_model", sa.String(length=200), nullable=False),
        sa.Column("b_model", sa.String(length=200), nullable=False),
        sa.Column("a_sha256", sa.String(length=64), nullable=True),
        sa.Column("b_sha256", sa.String(length=64), nullable=True),
        sa.Column("first_winner", sa.String(length=8), nullable=True),
        sa.Column("second_winner", sa.String(length=8), nullable=True),
        sa.Column("first_reply_id", sa.Integer(), nullable=True),
        sa.Column("second_reply_id", sa.Integer(), nullable=True),
        sa.Column("result", sa.String(length=8), nullable=True),
        sa.Column("position_biased", sa.Boolean(), nullable=False),
        sa.Column("failure_cause", sa.String(length=64), nullable=True),
        sa.Column("failure_detail", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["a_run_id"], ["runs.id"], name=op.f("fk_pairwise_comparisons_a_run_id_runs")
        ),
        sa.ForeignKeyConstraint(
            ["b_run_id"], ["runs.id"], name=op.f("fk_pairwise_comparisons_b_run_id_runs")
        ),
        sa.ForeignKeyConstraint(
            ["first_reply_id"],
            ["artifacts.id"],
            name=op.f("fk_pairwise_comparisons_first_reply_id_artifacts"),
        ),
        sa.ForeignKeyConstraint(
            ["second_reply_id"],
            ["artifacts.id"],
            name=op.f("fk_pairwise_comparisons_second_reply_id_artifacts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairwise_comparisons")),
    )
    op.create_index(
        op.f("ix_pairwise_comparisons_task_ref"), "pairwise_comparisons", ["task_ref"], unique=False
    )
    op.create_table(
        "pairwise_preferences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("left_sha256", sa.String(length=64), nullable=False),
        sa.Column("right_sha256", sa.String(length=64), nullable=False),
        sa.Column("left_name", sa.String(length=500), nullable=False),
        sa.Column("right_name", sa.String(length=500), nullable=False),
        sa.Column("winner", sa.String(length=8), nullable=False),
        sa.Column("annotator", sa.String(length=200), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=True),
        sa.Column("criterion", sa.String(length=100), nullable=True),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairwise_preferences")),
    )
    op.create_index(
        op.f("ix_pairwise_preferences_left_sha256"),
        "pairwise_preferences",
        ["left_sha256"],
        unique=False,
    )


def downgrade() -> None:
    """Drop both tables."""
    op.drop_index(op.f("ix_pairwise_preferences_left_sha256"), table_name="pairwise_preferences")
    op.drop_table("pairwise_preferences")
    op.drop_index(op.f("ix_pairwise_comparisons_task_ref"), table_name="pairwise_comparisons")
    op.drop_table("pairwise_comparisons")
