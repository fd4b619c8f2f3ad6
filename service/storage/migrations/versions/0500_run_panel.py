"""runs: the judge panel a submission asked for.

``runs.panel_id`` is NULL when the submission named no panel (the service's panel, or the task
version's default, judges it).

Revision ID: 0500_run_panel
Revises: 0400_access_sessions
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "0500_run_panel"
down_revision = "0400_access_sessions"

upgrade, downgrade = adding_columns("runs", "panel_id str(200) null")
