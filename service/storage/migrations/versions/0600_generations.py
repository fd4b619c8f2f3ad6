"""generations: the model call behind each run regua generated.

Revision ID: 0600_generations
Revises: 0510_gate_status
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0600_generations"
down_revision = "0510_gate_status"


def upgrade() -> None:
    """Create ``generations`` (one row per generated run; ``case_key`` unique when set)."""
    create_table(
        "generations",
        "id int",
        "run_id str(32)",
        "api str(32)",
        "model str(200)",
        "repeat int",
        "input_tokens int null",
        "output_tokens int null",
        "latency_ms float null",
        "elapsed_ms float null",
        "finish_reason str(64) null",
        "attempts int",
        "cost_usd float null",
        "price_table_version str(100) null",
        "timed_out bool",
        "refusal bool",
        "params json",
        "prompt_sha256 str(64)",
        "cause text null",
        "mock bool",
        "case_key str(200) null",
        "created_at datetime",
        keys=("run_id -> runs", "unique run_id", "unique case_key"),
    )


downgrade = dropping_tables("generations")  # the runs and their raw replies stay
