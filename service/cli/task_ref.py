"""Resolving ``--task ID@VERSION`` the same way in every command.

The one task registry of a command (:func:`service.tasks_store.configured.configured_tasks`):
the bundled versions plus those added to the configured task store (``REGUA_DATABASE_URL``,
``REGUA_DATA_DIR`` or the command's ``--data-dir``). An unknown reference ends the command with
``error: unknown task …; known tasks: …`` (exit 2, through the CLI's one error hook).
"""

from __future__ import annotations

from pathlib import Path

import typer

from regua.settings import load_settings
from service.tasks_store.configured import configured_tasks, with_data_dir
from tasks import TaskSpec

TaskDataDir = typer.Option(
    None, "--data-dir", help="Data folder whose task store is read too (REGUA_DATA_DIR)"
)


def resolve_task(ref: str, data_dir: Path | None = None) -> TaskSpec:
    """The task version ``ref``: bundled, or added to the configured task store."""
    with configured_tasks(with_data_dir(load_settings(), data_dir)) as registry:
        return registry.get(ref)
