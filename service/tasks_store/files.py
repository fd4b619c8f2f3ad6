"""Reading task files and templates from disk (``regua tasks add``, ``REGUA_TASKS_DIR``)."""

from __future__ import annotations

from pathlib import Path

from regua.errors import InvalidTaskError, TaskIntegrityError
from service.tasks_store.registry import StoredTaskRegistry
from service.tasks_store.store import Registration, register_task
from tasks import TaskSpec
from tasks.authoring import parse_document, spec_from_data
from tasks.variants import expand_template

SUFFIXES = (".yaml", ".yml", ".json")


def read_text(path: Path) -> str:
    """The UTF-8 text of a task file; :class:`InvalidTaskError` says why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InvalidTaskError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidTaskError(f"{path}: cannot be read as UTF-8 text ({exc})") from exc


def specs_of_text(text: str, source: str) -> list[TaskSpec]:
    """The task versions of one file: a task spec, or every variant of a template."""
    data, node = parse_document(text, source)
    if isinstance(data, dict) and "dimensions" in data and "spec" in data:
        return expand_template(text, source)
    return [spec_from_data(data, node, source)]


def specs_of_file(path: Path) -> list[TaskSpec]:
    """The task versions of one task file or template file."""
    return specs_of_text(read_text(path), str(path))


def load_tasks_dir(registry: StoredTaskRegistry, folder: Path) -> list[Registration]:
    """Register every task file and template of ``folder`` (sorted by name).

    A bad file, or one that changes a registered version, stops with the file named.
    """
    if not folder.is_dir():
        raise InvalidTaskError(f"REGUA_TASKS_DIR {folder} is not a folder")
    done = []
    for path in sorted(folder.iterdir()):
        if path.suffix in SUFFIXES and path.is_file():
            for spec in specs_of_file(path):
                try:
                    done.append(register_task(registry, spec, f"dir:{path}"))
                except TaskIntegrityError as exc:
                    raise TaskIntegrityError(f"{path}: {exc}") from exc
    return done
