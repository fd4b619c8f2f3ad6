"""task pools: retired task versions and leak flags of reserved tasks.

Revision ID: 0710_task_pools
Revises: 0700_task_store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0710_task_pools"
down_revision = "0700_task_store"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``task_retirements`` and ``leak_flags``."""
    op.create_table(
        "task_retirements",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task_ref", sa.String(length=200), nullable=False, unique=True),
        sa.Column("retired_by", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "leak_flags",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(length=32), sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("task_ref", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "task_ref", "kind"),
    )
    op.create_index("ix_leak_flags_run_id", "leak_flags", ["run_id"])
    op.create_index("ix_leak_flags_task_ref", "leak_flags", ["task_ref"])


def downgrade() -> None:
    """Drop both tables."""
    op.drop_index("ix_leak_flags_task_ref", table_name="leak_flags")
    op.drop_index("ix_leak_flags_run_id", table_name="leak_flags")
    op.drop_table("leak_flags")
    op.drop_table("task_retirements")
