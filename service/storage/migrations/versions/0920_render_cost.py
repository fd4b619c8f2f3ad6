"""render cost: a render's CPU time and its wait for a free worker, each in its own column.

``elapsed_ms`` keeps the render's wall time on its worker (from now on without the wait for a
free worker, which is ``queue_wait_ms``); ``cpu_ms`` is the CPU time of the sandbox's process
tree, the measure of the render budget.

Revision ID: 0920_render_cost
Revises: 0800_queue
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0920_render_cost"
down_revision = "0800_queue"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``render_records.cpu_ms`` and ``render_records.queue_wait_ms``."""
    with op.batch_alter_table("render_records") as batch:
        batch.add_column(sa.Column("cpu_ms", sa.Float(), nullable=True))
        batch.add_column(sa.Column("queue_wait_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    """Drop the two columns."""
    with op.batch_alter_table("render_records") as batch:
        batch.drop_column("queue_wait_ms")
        batch.drop_column("cpu_ms")
