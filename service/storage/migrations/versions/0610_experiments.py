"""experiments and their generated cases.

Revision ID: 0610_experiments
Revises: 0600_generations
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0610_experiments"
down_revision = "0600_generations"


def upgrade() -> None:
    """Create ``experiments`` and ``experiment_cases``."""
    create_table(
        "experiments",
        "id str(250)",
        "name str(100)",
        "window str(100)",
        "spec json",
        "spec_hash str(64)",
        "plan json",
        "seed int",
        "status str(16)",
        "error text null",
        "created_by int null",
        "created_at datetime",
        "finished_at datetime null",
        keys=("created_by -> api_tokens",),
        indexes=("name",),
    )
    create_table(
        "experiment_cases",
        "id int",
        "experiment_id str(250)",
        "case_key str(500)",
        "arm str(100)",
        "item str(200)",
        "repeat int",
        "task_ref str(200)",
        "run_id str(32)",
        "prompt_sha256 str(64) null",
        "latency_ms float null",
        "cost_usd float null",
        "input_tokens int null",
        "output_tokens int null",
        "timed_out bool",
        "created_at datetime",
        keys=("unique case_key", "experiment_id -> experiments", "run_id -> runs"),
        indexes=("experiment_id", "run_id"),
    )


downgrade = dropping_tables("experiment_cases", "experiments")
