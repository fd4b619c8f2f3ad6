"""leak flags by overlap: the overlapping text and the share of the prompt's 8-grams.

A reply that shares a run of 8 consecutive (normalised) words with a reserved prompt is flagged
with kind ``overlap``; ``leak_flags.overlap`` keeps the reply's overlapping text and
``leak_flags.share`` the share of the prompt's 8-grams the reply contains (both NULL for the
``canary`` and ``prompt`` kinds).

Revision ID: 1310_leak_overlap
Revises: 1300_preference_models
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1310_leak_overlap"
down_revision = "1300_preference_models"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two nullable columns."""
    with op.batch_alter_table("leak_flags") as batch:
        batch.add_column(sa.Column("overlap", sa.Text(), nullable=True))
        batch.add_column(sa.Column("share", sa.Float(), nullable=True))


def downgrade() -> None:
    """Drop the two columns."""
    with op.batch_alter_table("leak_flags") as batch:
        batch.drop_column("share")
        batch.drop_column("overlap")
