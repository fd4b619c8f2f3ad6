"""gate set size: how many labelled items each gate decision was measured on.

A new decision that would demote a trusted judge is compared with the size of the set that
earned the trusted one (a smaller set is refused unless asked to replace). Rows stored before
this column read their size from their metrics (``n_items - n_disputed``).

Revision ID: 1000_gate_set_size
Revises: 1510_task_proposals
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "1000_gate_set_size"
down_revision = "1510_task_proposals"

upgrade, downgrade = adding_columns("gate_decisions", "set_size int null")
