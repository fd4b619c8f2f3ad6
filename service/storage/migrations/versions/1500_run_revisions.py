"""run revisions: a run that answers feedback on an earlier run (render-and-revise).

Revision ID: 1500_run_revisions
Revises: 0920_render_cost
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "1500_run_revisions"
down_revision = "0920_render_cost"


def upgrade() -> None:
    """Create ``run_revisions`` (one row per revised run; one run per chain and round)."""
    create_table(
        "run_revisions",
        "id int",
        "run_id str(32)",
        "revision_of str(32)",
        "first_run_id str(32)",
        "round int",
        "frames_shown int",
        "findings_shown bool",
        "conversation_artifact_id int null",
        "created_at datetime",
        keys=(
            "conversation_artifact_id -> artifacts",
            "first_run_id -> runs",
            "revision_of -> runs",
            "run_id -> runs",
            "unique run_id",
            "unique first_run_id round as uq_run_revisions_round",
        ),
        indexes=("revision_of", "first_run_id"),
    )


downgrade = dropping_tables("run_revisions")  # the revised runs stay, as unlinked runs
