"""Loading bundled task specs and keeping registered versions frozen."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from regua.errors import TaskError, TaskIntegrityError, UnknownTaskError
from tasks.model import TaskSpec, parse_ref


def load_task_text(text: str, source: str = "<text>") -> TaskSpec:
    """Validate one YAML task text into a :class:`TaskSpec`."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskError(f"{source}: not valid YAML: {exc}") from exc
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskError(f"{source}: invalid task spec:\n{exc}") from exc


class TaskRegistry:
    """Task versions by reference. A registered version is immutable: re-registering the same
    ``ID@VERSION`` with different content raises :class:`TaskIntegrityError`."""

    def __init__(self, specs: Iterable[TaskSpec] = ()) -> None:
        self._specs: dict[str, TaskSpec] = {}
        self._hashes: dict[str, str] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: TaskSpec) -> None:
        """Add a task version, or confirm it is byte-for-byte the one already registered."""
        digest = spec.content_hash()
        known = self._hashes.get(spec.ref)
        if known is not None and known != digest:
            raise TaskIntegrityError(
                f"{spec.ref} is already registered with hash {known[:12]}; the new content hashes "
                f"to {digest[:12]}. A changed task is a new version."
            )
        self._specs[spec.ref] = spec
        self._hashes[spec.ref] = digest

    def get(self, ref: str) -> TaskSpec:
        """The task for ``ID@VERSION``; raises :class:`UnknownTaskError` listing known refs."""
        try:
            parse_ref(ref)
        except ValueError as exc:
            raise UnknownTaskError(ref, self.refs()) from exc
        spec = self._specs.get(ref)
        if spec is None:
            raise UnknownTaskError(ref, self.refs())
        return spec

    def content_hash(self, ref: str) -> str:
        """The frozen hash of a registered version."""
        self.get(ref)
        return self._hashes[ref]

    def refs(self) -> list[str]:
        """All registered references, sorted."""
        return sorted(self._specs)

    def all(self) -> list[TaskSpec]:
        """All registered specs, sorted by reference."""
        return [self._specs[r] for r in self.refs()]


def bundled_spec_texts() -> list[tuple[str, str]]:
    """(file name, YAML text) of every task bundled with regua."""
    folder = resources.files("tasks") / "specs"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            out.append((entry.name, entry.read_text(encoding="utf-8")))
    return out


@lru_cache(maxsize=1)
def bundled_registry() -> TaskRegistry:
    """The registry of bundled tasks (cached; specs are immutable)."""
    return TaskRegistry(load_task_text(text, name) for name, text in bundled_spec_texts())


def load_task_file(path: Path) -> TaskSpec:
    """Load one task spec file from disk."""
    return load_task_text(path.read_text(encoding="utf-8"), str(path))
