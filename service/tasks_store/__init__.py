"""The task store: users' task versions in the database, read by every service process."""

from service.tasks_store.registry import StoredTaskRegistry
from service.tasks_store.store import Registration, register_task

__all__ = ["Registration", "StoredTaskRegistry", "register_task"]
