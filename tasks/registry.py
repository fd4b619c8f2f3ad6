"""Loading bundled task specs and keeping registered versions frozen."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from regua.errors import TaskError, TaskIntegrityError, UnknownTaskError
from regua.safe_yaml import load_yaml
from tasks.model import TaskSpec, parse_ref


def load_task_text(text: str, source: str = "<text>") -> TaskSpec:
    """Validate one YAML task text into a :class:`TaskSpec`."""
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise TaskError(f"{source}: not valid YAML: {exc}") from exc
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskError(f"{source}: invalid task spec:\n{exc}") from exc


class TaskRegistry:
    """Task versions by reference.

    A registered version is immutable: re-registering the same ``ID@VERSION`` with different
    content raises :class:`TaskIntegrityError`.
    """

    def __init__(self, specs: Iterable[TaskSpec] = ()) -> None:
        """Register each of ``specs``."""
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

    def versions(self, task_id: str) -> list[TaskSpec]:
        """Every registered version of one task id, oldest first."""
        return sorted((s for s in self._specs.values() if s.id == task_id), key=lambda s: s.version)

    def latest(self, task_id: str) -> TaskSpec:
        """The newest registered version of a task id (:class:`UnknownTaskError` when none)."""
        found = self.versions(task_id)
        if not found:
            raise UnknownTaskError(f"{task_id}@latest", self.refs())
        return found[-1]


def bundled_spec_texts() -> list[tuple[str, str]]:
    """(file name, YAML text) of every task bundled with regua."""
    folder = resources.files("tasks") / "specs"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            out.append((entry.name, entry.read_text(encoding="utf-8")))
    return out


BUNDLED_HASHES = {
    "lighthouse-night-graded@1": (
        "9b5a4beba4fcde70d8631bd90de8093127a4bf2efd551a71b2eecbdfe3368f08"
    ),
    "pelican-bicycle-animated@1": (
        "f3e938c19cf89152ec0f01bacfcfa8e8e47b584d93bbb989d485e010712bb7bf"
    ),
    "pelican-bicycle-animated@2": (
        "c8002abbfa89910c32d3d2c0aea76372c96624172b04a35d8a2e655766c218ba"
    ),
    "pelican-bicycle-open@1": "5a0059db8567bb1d63fa26475f857086037b9713652b70b68323dd45ad7dd2c4",
    "pelican-bicycle-restricted@1": (
        "71f623304c1ad5c862a68d3d10720571dc6efdcac23fe45e79f4ede2b93225f6"
    ),
    "pelican-bicycle-static@1": "070519c3f5ffb542834315c336e880cb568b6ef0390e67031c6248d0bacb3029",
    "pelican-bicycle-structured@1": (
        "7e91760194ad92b8ad7d8102e6b11158107cf70a2958a92df8fb0ceae72fe891"
    ),
    "pelican-bicycle-structured@2": (
        "f99f64041e7b94700398acfc0bc08c4dfe09201eee45ac17b45e04aef8a541c3"
    ),
}
"""Content hashes of the bundled task versions: editing a released spec fails at load."""


def check_pinned(spec: TaskSpec, pins: dict[str, str] | None = None) -> TaskSpec:
    """Return ``spec`` when its hash matches its pin; raise :class:`TaskIntegrityError` otherwise.

    A bundled spec without a pin is refused too: a new task version gets its pin when released.
    """
    table = BUNDLED_HASHES if pins is None else pins
    pinned = table.get(spec.ref)
    digest = spec.content_hash()
    if pinned is None:
        raise TaskIntegrityError(f"{spec.ref} has no pinned hash ({digest}); add it to the pins")
    if pinned != digest:
        raise TaskIntegrityError(
            f"{spec.ref} changed: its content hashes to {digest[:12]}, pinned {pinned[:12]}. "
            "A released task is frozen; a changed task is a new version."
        )
    return spec


@lru_cache(maxsize=1)
def bundled_registry() -> TaskRegistry:
    """The registry of bundled tasks (cached; specs are immutable and their hashes pinned)."""
    return TaskRegistry(
        check_pinned(load_task_text(text, name)) for name, text in bundled_spec_texts()
    )


def load_task_file(path: Path) -> TaskSpec:
    """Load one task spec file from disk."""
    return load_task_text(path.read_text(encoding="utf-8"), str(path))
