"""graded criteria and adjudication: levels, adjudications, rubric scores.

``verdicts.level`` and ``criterion_outcomes.level`` keep the level of a graded criterion;
``adjudications`` keeps every adjudication of a disputed criterion (why, what the adjudicator
was shown, its prompt and reply, trust and result); ``rubric_scores`` keeps a graded task's
score, levels, bounds, threshold and verdict per evaluation.

Revision ID: 1400_graded_adjudication
Revises: 1000_gate_set_size
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1400_graded_adjudication"
down_revision = "1000_gate_set_size"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two level columns and the two tables."""
    with op.batch_alter_table("verdicts") as batch:
        batch.add_column(sa.Column("level", sa.Integer(), nullable=True))
    with op.batch_alter_table("criterion_outcomes") as batch:
        batch.add_column(sa.Column("level", sa.Integer(), nullable=True))
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("evaluation_id", sa.Integer(), sa.ForeignKey("evaluations.id"), nullable=False),
        sa.Column("criterion", sa.String(50), nullable=False),
        sa.Column("adjudicator_id", sa.String(200), nullable=False),
        sa.Column("adjudicator_hash", sa.String(64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("trusted", sa.Boolean(), nullable=False),
        sa.Column("result", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=True),
        sa.Column("level", sa.Integer(), nullable=True),
        sa.Column("evidence", sa.JSON(), nullable=True),
        sa.Column("failure_cause", sa.String(100), nullable=True),
        sa.Column("failure_detail", sa.Text(), nullable=True),
        sa.Column("prompt_version", sa.String(100), nullable=True),
        sa.Column("prompt_artifact_id", sa.Integer(), sa.ForeignKey("artifacts.id"), nullable=True),
        sa.Column("raw_artifact_id", sa.Integer(), sa.ForeignKey("artifacts.id"), nullable=True),
    )
    op.create_index("ix_adjudications_evaluation_id", "adjudications", ["evaluation_id"])
    op.create_table(
        "rubric_scores",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "evaluation_id",
            sa.Integer(),
            sa.ForeignKey("evaluations.id"),
            nullable=False,
            unique=True,
        ),
        sa.Column("name", sa.String(50), nullable=False),
        sa.Column("formula", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("score_text", sa.String(40), nullable=True),
        sa.Column("arithmetic", sa.Text(), nullable=True),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("threshold_met", sa.Boolean(), nullable=True),
        sa.Column("max_score", sa.Float(), nullable=False),
        sa.Column("levels", sa.JSON(), nullable=False),
        sa.Column("bounds", sa.JSON(), nullable=False),
        sa.Column("missing", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False),
    )


def downgrade() -> None:
    """Drop the tables and the level columns."""
    op.drop_table("rubric_scores")
    op.drop_index("ix_adjudications_evaluation_id", table_name="adjudications")
    op.drop_table("adjudications")
    with op.batch_alter_table("criterion_outcomes") as batch:
        batch.drop_column("level")
    with op.batch_alter_table("verdicts") as batch:
        batch.drop_column("level")
