"""gate decisions keyed by the calibrated profile's content hash.

Revision ID: 0300_gate_profile_hash
Revises: 0200_calibration
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0300_gate_profile_hash"
down_revision = "0200_calibration"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``gate_decisions.profile_hash`` and fill it from the decision's calibration run."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.add_column(sa.Column("profile_hash", sa.String(length=64), nullable=True))
    op.execute(
        "UPDATE gate_decisions SET profile_hash = (SELECT calibration_runs.profile_hash "
        "FROM calibration_runs WHERE calibration_runs.id = gate_decisions.calibration_run_id)"
    )


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("gate_decisions") as batch:
        batch.drop_column("profile_hash")
