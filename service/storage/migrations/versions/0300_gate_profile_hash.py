"""gate decisions keyed by the calibrated profile's content hash.

Revision ID: 0300_gate_profile_hash
Revises: 0200_calibration
"""

from __future__ import annotations

from alembic import op

from service.storage.migrations.ddl import add_columns, drop_columns

revision = "0300_gate_profile_hash"
down_revision = "0200_calibration"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``gate_decisions.profile_hash`` and fill it from the decision's calibration run."""
    add_columns("gate_decisions", "profile_hash str(64) null")
    op.execute(
        "UPDATE gate_decisions SET profile_hash = (SELECT calibration_runs.profile_hash "
        "FROM calibration_runs WHERE calibration_runs.id = gate_decisions.calibration_run_id)"
    )


def downgrade() -> None:
    """Drop the column."""
    drop_columns("gate_decisions", "profile_hash")
