"""run revisions: a run that answers feedback on an earlier run (render-and-revise).

Revision ID: 1500_run_revisions
Revises: 0920_render_cost
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1500_run_revisions"
down_revision = "0920_render_cost"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``run_revisions`` (one row per revised run; one run per chain and round)."""
    op.create_table(
        "run_revisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("revision_of", sa.String(length=32), nullable=False),
        sa.Column("first_run_id", sa.String(length=32), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("frames_shown", sa.Integer(), nullable=False),
        sa.Column("findings_shown", sa.Boolean(), nullable=False),
        sa.Column("conversation_artifact_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_artifact_id"],
            ["artifacts.id"],
            name=op.f("fk_run_revisions_conversation_artifact_id_artifacts"),
        ),
        sa.ForeignKeyConstraint(
            ["first_run_id"], ["runs.id"], name=op.f("fk_run_revisions_first_run_id_runs")
        ),
        sa.ForeignKeyConstraint(
            ["revision_of"], ["runs.id"], name=op.f("fk_run_revisions_revision_of_runs")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_revisions_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_revisions")),
        sa.UniqueConstraint("run_id", name=op.f("uq_run_revisions_run_id")),
        sa.UniqueConstraint("first_run_id", "round", name="uq_run_revisions_round"),
    )
    op.create_index(op.f("ix_run_revisions_revision_of"), "run_revisions", ["revision_of"])
    op.create_index(op.f("ix_run_revisions_first_run_id"), "run_revisions", ["first_run_id"])


def downgrade() -> None:
    """Drop ``run_revisions`` (the revised runs stay, as unlinked runs)."""
    op.drop_index(op.f("ix_run_revisions_first_run_id"), table_name="run_revisions")
    op.drop_index(op.f("ix_run_revisions_revision_of"), table_name="run_revisions")
    op.drop_table("run_revisions")
