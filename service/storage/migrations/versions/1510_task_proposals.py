"""task proposals: model-proposed template variants, and the one decision a person takes on each.

Revision ID: 1510_task_proposals
Revises: 1500_run_revisions
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1510_task_proposals"
down_revision = "1500_run_revisions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``task_proposals`` and ``task_proposal_decisions``."""
    op.create_table(
        "task_proposals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("template", sa.String(length=200), nullable=False),
        sa.Column("template_sha256", sa.String(length=64), nullable=False),
        sa.Column("template_text", sa.Text(), nullable=False),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.Column("proposed", sa.JSON(), nullable=False),
        sa.Column("ref", sa.String(length=200), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("api", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("mock", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"], ["api_tokens.id"], name=op.f("fk_task_proposals_created_by_api_tokens")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_proposals")),
    )
    op.create_index(op.f("ix_task_proposals_batch_id"), "task_proposals", ["batch_id"])
    op.create_index(op.f("ix_task_proposals_template"), "task_proposals", ["template"])
    op.create_table(
        "task_proposal_decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("proposal_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("registered_ref", sa.String(length=200), nullable=True),
        sa.Column("decided_by", sa.Integer(), nullable=True),
        sa.Column("decided_by_name", sa.String(length=200), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["decided_by"],
            ["api_tokens.id"],
            name=op.f("fk_task_proposal_decisions_decided_by_api_tokens"),
        ),
        sa.ForeignKeyConstraint(
            ["proposal_id"],
            ["task_proposals.id"],
            name=op.f("fk_task_proposal_decisions_proposal_id_task_proposals"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_proposal_decisions")),
        sa.UniqueConstraint("proposal_id", name=op.f("uq_task_proposal_decisions_proposal_id")),
    )


def downgrade() -> None:
    """Drop both tables (registered task versions stay)."""
    op.drop_table("task_proposal_decisions")
    op.drop_index(op.f("ix_task_proposals_template"), table_name="task_proposals")
    op.drop_index(op.f("ix_task_proposals_batch_id"), table_name="task_proposals")
    op.drop_table("task_proposals")
