"""gate decisions keyed by the calibrated profile's content hash.

Revision ID: 0300_gate_profile_hash
Revises: 0200_calibration
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "0300_gate_profile_hash"
down_revision = "0200_calibration"

upgrade, downgrade = adding_columns(
    "gate_decisions",
    "profile_hash str(64) null",
    fill="UPDATE gate_decisions SET profile_hash = (SELECT calibration_runs.profile_hash "
    "FROM calibration_runs WHERE calibration_runs.id = gate_decisions.calibration_run_id)",
)
