"""the task store: task versions registered by users.

Revision ID: 0700_task_store
Revises: 0620_pairwise
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0700_task_store"
down_revision = "0620_pairwise"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``task_versions`` (one frozen row per registered ``ID@VERSION``)."""
    op.create_table(
        "task_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("family", sa.String(length=200), nullable=False),
        sa.Column("pool", sa.String(length=40), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_versions")),
        sa.UniqueConstraint("ref", name=op.f("uq_task_versions_ref")),
    )
    op.create_index(op.f("ix_task_versions_task_id"), "task_versions", ["task_id"])


def downgrade() -> None:
    """Drop ``task_versions``."""
    op.drop_index(op.f("ix_task_versions_task_id"), table_name="task_versions")
    op.drop_table("task_versions")
