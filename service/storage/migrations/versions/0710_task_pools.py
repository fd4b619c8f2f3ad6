"""task pools: retired task versions and leak flags of reserved tasks.

Revision ID: 0710_task_pools
Revises: 0700_task_store
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0710_task_pools"
down_revision = "0700_task_store"


def upgrade() -> None:
    """Create ``task_retirements`` and ``leak_flags``."""
    create_table(
        "task_retirements",
        "id int",
        "task_ref str(200)",
        "retired_by str(200)",
        "note text",
        "retired_at datetime",
        keys=("unique task_ref",),
    )
    create_table(
        "leak_flags",
        "id int",
        "run_id str(32)",
        "task_ref str(200)",
        "kind str(16)",
        "created_at datetime",
        keys=("unique run_id task_ref kind", "run_id -> runs"),
        indexes=("run_id", "task_ref"),
    )


downgrade = dropping_tables("leak_flags", "task_retirements")
