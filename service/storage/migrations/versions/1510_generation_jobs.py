"""generation jobs: every generation job stored, so any process reports it and any worker runs it.

``generation_jobs`` holds the request of ``POST /v1/generations`` (task, model parameters,
repeats, revision rounds, token), its state (``running``, ``done``, ``failed``, ``interrupted``)
and its progress; the embedded job runner and the procrastinate ``generate`` queue both run it
from this row.

Revision ID: 1510_generation_jobs
Revises: 1200_run_lanes
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "1510_generation_jobs"
down_revision = "1200_run_lanes"


def upgrade() -> None:
    """Create ``generation_jobs``."""
    create_table(
        "generation_jobs",
        "id str(40)",
        "task str(200)",
        "params json",
        "repeats int",
        "revise int",
        "revise_findings bool",
        "token_id int null",
        "state str(16)",
        "done int",
        "rounds_done int",
        "run_ids json",
        "chains json",
        "error text null",
        "created_at datetime",
        "updated_at datetime",
        indexes=("token_id", "state"),
    )


downgrade = dropping_tables("generation_jobs")
