"""the task store: task versions registered by users.

Revision ID: 0700_task_store
Revises: 0620_pairwise
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0700_task_store"
down_revision = "0620_pairwise"


def upgrade() -> None:
    """Create ``task_versions`` (one frozen row per registered ``ID@VERSION``)."""
    create_table(
        "task_versions",
        "id int",
        "ref str(200)",
        "task_id str(200)",
        "version int",
        "family str(200)",
        "pool str(40)",
        "content_hash str(64)",
        "spec json",
        "source str(500)",
        "registered_at datetime",
        keys=("unique ref",),
        indexes=("task_id",),
    )


downgrade = dropping_tables("task_versions")
