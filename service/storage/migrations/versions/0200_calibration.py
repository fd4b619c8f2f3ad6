"""calibration storage and re-scoring.

Tables: calibration_runs, gate_decisions, rescore_batches, rescore_items.

Revision ID: 0200_calibration
Revises: 0100_review
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0200_calibration"
down_revision = "0100_review"


def upgrade() -> None:
    """Create the calibration and re-scoring tables."""
    create_table(
        "calibration_runs",
        "id str(64)",
        "profile_id str(200)",
        "profile_hash str(64) null",
        "set_id str(200)",
        "set_hash str(64)",
        "task_ref str(200)",
        "task_family str(200)",
        "split str(20)",
        "criteria json",
        "data json",
        "requested_by int null",
        "created_at datetime",
        indexes=("profile_id",),
    )
    create_table(
        "gate_decisions",
        "id int",
        "profile_id str(200)",
        "criterion str(50)",
        "task_family str(200)",
        "passed bool",
        "reasons json",
        "metrics json",
        "thresholds json",
        "gate_id str(200)",
        "set_id str(200)",
        "split_seed int null",
        "decided_at str(64)",
        "calibration_run_id str(64) null",
        "created_at datetime",
        keys=("calibration_run_id -> calibration_runs",),
        indexes=("profile_id", "calibration_run_id"),
    )
    create_table(
        "rescore_batches",
        "id str(40)",
        "task_ref str(200)",
        "panel_id str(200)",
        "panel json",
        "requested_by int null",
        "summary json",
        "note text null",
        "created_at datetime",
    )
    create_table(
        "rescore_items",
        "id int",
        "batch_id str(40)",
        "run_id str(32)",
        "evaluation_id int",
        "previous_evaluation_id int null",
        "rerendered bool",
        keys=(
            "batch_id -> rescore_batches",
            "run_id -> runs",
            "evaluation_id -> evaluations",
            "previous_evaluation_id -> evaluations",
        ),
        indexes=("batch_id", "run_id"),
    )


downgrade = dropping_tables(
    "rescore_items", "rescore_batches", "gate_decisions", "calibration_runs"
)
