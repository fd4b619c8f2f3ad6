"""pairwise comparisons (both orders, raw replies as artifacts) and human preferences.

Revision ID: 0620_pairwise
Revises: 0610_experiments
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0620_pairwise"
down_revision = "0610_experiments"


def upgrade() -> None:
    """Create ``pairwise_comparisons`` and ``pairwise_preferences``."""
    create_table(
        "pairwise_comparisons",
        "id int",
        "task_ref str(200)",
        "criterion str(100)",
        "judge_id str(200)",
        "a_run_id str(32) null",
        "b_run_id str(32) null",
        "a_model str(200)",
        "b_model str(200)",
        "a_sha256 str(64) null",
        "b_sha256 str(64) null",
        "first_winner str(8) null",
        "second_winner str(8) null",
        "first_reply_id int null",
        "second_reply_id int null",
        "result str(8) null",
        "position_biased bool",
        "failure_cause str(64) null",
        "failure_detail text null",
        "created_at datetime",
        keys=(
            "a_run_id -> runs",
            "b_run_id -> runs",
            "first_reply_id -> artifacts",
            "second_reply_id -> artifacts",
        ),
        indexes=("task_ref",),
    )
    create_table(
        "pairwise_preferences",
        "id int",
        "left_sha256 str(64)",
        "right_sha256 str(64)",
        "left_name str(500)",
        "right_name str(500)",
        "winner str(8)",
        "annotator str(200)",
        "task_ref str(200) null",
        "criterion str(100) null",
        "source str(500)",
        "line int",
        "created_at datetime",
        indexes=("left_sha256",),
    )


downgrade = dropping_tables("pairwise_preferences", "pairwise_comparisons")
