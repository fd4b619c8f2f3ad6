"""task proposals: model-proposed template variants, and the one decision a person takes on each.

Revision ID: 1510_task_proposals
Revises: 1500_run_revisions
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "1510_task_proposals"
down_revision = "1500_run_revisions"


def upgrade() -> None:
    """Create ``task_proposals`` and ``task_proposal_decisions``."""
    create_table(
        "task_proposals",
        "id int",
        "batch_id str(32)",
        "template str(200)",
        "template_sha256 str(64)",
        "template_text text",
        "values json",
        "proposed json",
        "ref str(200) null",
        "content_hash str(64) null",
        "problem text null",
        "rationale text",
        "api str(32)",
        "model str(200)",
        "params json",
        "prompt text",
        "prompt_sha256 str(64)",
        "reply text",
        "cost_usd float null",
        "mock bool",
        "created_by int null",
        "created_at datetime",
        keys=("created_by -> api_tokens",),
        indexes=("batch_id", "template"),
    )
    create_table(
        "task_proposal_decisions",
        "id int",
        "proposal_id int",
        "decision str(16)",
        "reason text",
        "registered_ref str(200) null",
        "decided_by int null",
        "decided_by_name str(200)",
        "decided_at datetime",
        keys=(
            "decided_by -> api_tokens",
            "proposal_id -> task_proposals",
            "unique proposal_id",
        ),
    )


downgrade = dropping_tables(
    "task_proposal_decisions", "task_proposals"
)  # registered task versions stay
