"""render cost: a render's CPU time and its wait for a free worker, each in its own column.

``elapsed_ms`` keeps the render's wall time on its worker (from now on without the wait for a
free worker, which is ``queue_wait_ms``); ``cpu_ms`` is the CPU time of the sandbox's process
tree, the measure of the render budget.

Revision ID: 0920_render_cost
Revises: 0800_queue
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "0920_render_cost"
down_revision = "0800_queue"

upgrade, downgrade = adding_columns(
    "render_records", "cpu_ms float null", "queue_wait_ms float null"
)
