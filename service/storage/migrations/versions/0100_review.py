"""review queue tables: review_items, reviews, review_scans.

Revision ID: 0100_review
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0100_review"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the review tables."""
    op.create_table(
        "review_items",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("criterion", sa.String(length=50), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("original_status", sa.String(length=20), nullable=False),
        sa.Column("suggestion", sa.String(length=20), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("audited_judges", sa.JSON(), nullable=False),
        sa.Column("reviews_needed", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("final_label", sa.String(length=20), nullable=True),
        sa.Column("resolved_evaluation_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_review_items_run_id_runs")),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_review_items_evaluation_id_evaluations"),
        ),
        sa.ForeignKeyConstraint(
            ["resolved_evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_review_items_resolved_evaluation_id_evaluations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_items")),
        sa.UniqueConstraint("run_id", "criterion", name="uq_review_items_run_crit"),
    )
    with op.batch_alter_table("review_items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_items_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_review_items_state"), ["state"], unique=False)
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=40), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=False),
        sa.Column("reviewer_name", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("time_s", sa.Float(), nullable=True),
        sa.Column("adjudication", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["review_items.id"], name=op.f("fk_reviews_item_id_review_items")
        ),
        sa.ForeignKeyConstraint(
            ["reviewer_id"], ["api_tokens.id"], name=op.f("fk_reviews_reviewer_id_api_tokens")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint("item_id", "reviewer_id", "adjudication", name="uq_reviews_once"),
    )
    with op.batch_alter_table("reviews", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reviews_item_id"), ["item_id"], unique=False)
    op.create_table(
        "review_scans",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_review_scans_evaluation_id_evaluations"),
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_review_scans_run_id_runs")),
        sa.PrimaryKeyConstraint("evaluation_id", name=op.f("pk_review_scans")),
    )
    with op.batch_alter_table("review_scans", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_scans_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    """Drop the review tables."""
    op.drop_table("review_scans")
    op.drop_table("reviews")
    op.drop_table("review_items")
