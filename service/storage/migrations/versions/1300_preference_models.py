"""pairwise preferences name their models: ``left_model`` and ``right_model``.

A preferences CSV may say which model made each drawing (columns ``left_model`` and
``right_model``); people's preferences then rank those models as a source of their own. Rows
without the columns map drawings to models through stored runs.

Revision ID: 1300_preference_models
Revises: 1400_graded_adjudication
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "1300_preference_models"
down_revision = "1400_graded_adjudication"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two nullable model columns."""
    with op.batch_alter_table("pairwise_preferences") as batch:
        batch.add_column(sa.Column("left_model", sa.String(200), nullable=True))
        batch.add_column(sa.Column("right_model", sa.String(200), nullable=True))


def downgrade() -> None:
    """Drop the two model columns."""
    with op.batch_alter_table("pairwise_preferences") as batch:
        batch.drop_column("right_model")
        batch.drop_column("left_model")
