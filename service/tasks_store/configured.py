"""The one task registry of a command: bundled tasks plus the task store of the configured database.

Every command and route that takes a task reference resolves it here (or through the service's
:class:`~service.tasks_store.registry.StoredTaskRegistry`, which is the same thing held open):
the bundled versions, plus every version added to the database the settings name
(``REGUA_DATABASE_URL``, else ``REGUA_DATA_DIR/regua.sqlite3``). A command that only reads tasks
never creates a database: when the configured SQLite file does not exist yet, the bundled tasks
are all there is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from regua.settings import Settings
from service.storage import Database
from service.tasks_store.registry import StoredTaskRegistry
from tasks import TaskRegistry, bundled_registry


def configured_database_exists(settings: Settings) -> bool:
    """Whether the settings name a database that already exists (a server URL always does)."""
    url = settings.resolved_database_url()
    if not url.startswith("sqlite"):
        return True
    path = url.removeprefix("sqlite:///")
    return path not in ("", ":memory:") and Path(path).is_file()


def with_data_dir(settings: Settings, data_dir: Path | None) -> Settings:
    """``settings`` with ``--data-dir`` applied (None: as configured)."""
    if data_dir is None:
        return settings
    return settings.model_copy(update={"data_dir": data_dir})


@contextmanager
def configured_tasks(settings: Settings) -> Iterator[TaskRegistry]:
    """The task registry of ``settings``: bundled plus the configured task store, if any.

    The database is opened (and closed on exit) only when it exists.
    """
    if not configured_database_exists(settings):
        yield bundled_registry()
        return
    db = Database(settings.resolved_database_url())
    try:
        yield StoredTaskRegistry(db, bundled_registry())
    finally:
        db.dispose()


def families_of(registry: TaskRegistry) -> dict[str, set[str]]:
    """Task family → every criterion id of its registered versions."""
    out: dict[str, set[str]] = {}
    for spec in registry.all():
        out.setdefault(spec.family, set()).update(c.id for c in spec.criteria)
    return out


def origin_of(registry: TaskRegistry, ref: str) -> str:
    """``bundled`` or ``added`` (registered into the task store)."""
    if isinstance(registry, StoredTaskRegistry):
        return "bundled" if ref in registry.bundled else "added"
    return "bundled"
