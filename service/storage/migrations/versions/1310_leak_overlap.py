"""leak flags by overlap: the overlapping text and the share of the prompt's 8-grams.

A reply that shares a run of 8 consecutive (normalised) words with a reserved prompt is flagged
with kind ``overlap``; ``leak_flags.overlap`` keeps the reply's overlapping text and
``leak_flags.share`` the share of the prompt's 8-grams the reply contains (both NULL for the
``canary`` and ``prompt`` kinds).

Revision ID: 1310_leak_overlap
Revises: 1300_preference_models
"""

from __future__ import annotations

from service.storage.migrations.ddl import add_columns, drop_columns

revision = "1310_leak_overlap"
down_revision = "1300_preference_models"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two nullable columns."""
    add_columns("leak_flags", "overlap text null", "share float null")


def downgrade() -> None:
    """Drop the two columns."""
    drop_columns("leak_flags", "share", "overlap")
