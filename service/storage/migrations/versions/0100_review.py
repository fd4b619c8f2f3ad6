"""review queue tables: review_items, reviews, review_scans.

Revision ID: 0100_review
Revises: 0001
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0100_review"
down_revision = "0001"


def upgrade() -> None:
    """Create the review tables."""
    create_table(
        "review_items",
        "id str(40)",
        "run_id str(32)",
        "criterion str(50)",
        "kind str(16)",
        "evaluation_id int",
        "original_status str(20)",
        "suggestion str(20) null",
        "reason text",
        "audited_judges json",
        "reviews_needed int",
        "state str(16)",
        "final_label str(20) null",
        "resolved_evaluation_id int null",
        "created_at datetime",
        "resolved_at datetime null",
        keys=(
            "run_id -> runs",
            "evaluation_id -> evaluations",
            "resolved_evaluation_id -> evaluations",
            "unique run_id criterion as uq_review_items_run_crit",
        ),
        indexes=("run_id", "state"),
    )
    create_table(
        "reviews",
        "id int",
        "item_id str(40)",
        "reviewer_id int",
        "reviewer_name str(200)",
        "status str(20)",
        "note text",
        "time_s float null",
        "adjudication bool",
        "created_at datetime",
        keys=(
            "item_id -> review_items",
            "reviewer_id -> api_tokens",
            "unique item_id reviewer_id adjudication as uq_reviews_once",
        ),
        indexes=("item_id",),
    )
    create_table(
        "review_scans",
        "evaluation_id int",
        "run_id str(32)",
        "items int",
        "created_at datetime",
        keys=("evaluation_id -> evaluations", "run_id -> runs"),
        primary="evaluation_id",
        indexes=("run_id",),
    )


downgrade = dropping_tables("review_scans", "reviews", "review_items")
