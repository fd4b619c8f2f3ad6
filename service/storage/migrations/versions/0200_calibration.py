"""calibration storage and re-scoring.

Tables: calibration_runs, gate_decisions, rescore_batches, rescore_items.

Revision ID: 0200_calibration
Revises: 0100_review
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0200_calibration"
down_revision = "0100_review"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the calibration and re-scoring tables."""
    op.create_table(
        "calibration_runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("profile_id", sa.String(length=200), nullable=False),
        sa.Column("profile_hash", sa.String(length=64), nullable=True),
        sa.Column("set_id", sa.String(length=200), nullable=False),
        sa.Column("set_hash", sa.String(length=64), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=False),
        sa.Column("task_family", sa.String(length=200), nullable=False),
        sa.Column("split", sa.String(length=20), nullable=False),
        sa.Column("criteria", sa.JSON(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibration_runs")),
    )
    op.create_index(
        op.f("ix_calibration_runs_profile_id"), "calibration_runs", ["profile_id"], unique=False
    )
    op.create_table(
        "gate_decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("profile_id", sa.String(length=200), nullable=False),
        sa.Column("criterion", sa.String(length=50), nullable=False),
        sa.Column("task_family", sa.String(length=200), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("thresholds", sa.JSON(), nullable=False),
        sa.Column("gate_id", sa.String(length=200), nullable=False),
        sa.Column("set_id", sa.String(length=200), nullable=False),
        sa.Column("split_seed", sa.Integer(), nullable=True),
        sa.Column("decided_at", sa.String(length=64), nullable=False),
        sa.Column("calibration_run_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["calibration_run_id"],
            ["calibration_runs.id"],
            name=op.f("fk_gate_decisions_calibration_run_id_calibration_runs"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gate_decisions")),
    )
    op.create_index(
        op.f("ix_gate_decisions_profile_id"), "gate_decisions", ["profile_id"], unique=False
    )
    op.create_index(
        op.f("ix_gate_decisions_calibration_run_id"),
        "gate_decisions",
        ["calibration_run_id"],
        unique=False,
    )
    op.create_table(
        "rescore_batches",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=False),
        sa.Column("panel_id", sa.String(length=200), nullable=False),
        sa.Column("panel", sa.JSON(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rescore_batches")),
    )
    op.create_table(
        "rescore_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("previous_evaluation_id", sa.Integer(), nullable=True),
        sa.Column("rerendered", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["rescore_batches.id"],
            name=op.f("fk_rescore_items_batch_id_rescore_batches"),
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_rescore_items_run_id_runs")),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_rescore_items_evaluation_id_evaluations"),
        ),
        sa.ForeignKeyConstraint(
            ["previous_evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_rescore_items_previous_evaluation_id_evaluations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rescore_items")),
    )
    op.create_index(op.f("ix_rescore_items_batch_id"), "rescore_items", ["batch_id"], unique=False)
    op.create_index(op.f("ix_rescore_items_run_id"), "rescore_items", ["run_id"], unique=False)


def downgrade() -> None:
    """Drop the calibration and re-scoring tables."""
    op.drop_table("rescore_items")
    op.drop_table("rescore_batches")
    op.drop_table("gate_decisions")
    op.drop_table("calibration_runs")
