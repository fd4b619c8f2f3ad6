"""The check extension point: the :class:`Check` protocol and the registry checks are added to.

Built-in checks register through :func:`register_check` exactly like a plugin would;
:mod:`checks.suite` loads them and runs the suite.
"""

from __future__ import annotations

from itertools import count
from typing import Protocol, runtime_checkable

from checks.parse import Document
from checks.types import CheckResult
from regua.registry import Registry
from tasks import TaskSpec


@runtime_checkable
class Check(Protocol):
    """A static check: pure, no I/O, returns one result for one document under one task."""

    @property
    def id(self) -> str:
        """Stable check id (e.g. ``script``)."""
        ...

    @property
    def version(self) -> str:
        """Version of the check's rules; any change of behaviour is a new version."""
        ...

    @property
    def needs_tree(self) -> bool:
        """When True the check is skipped for a document that did not parse (``parse`` fails)."""
        ...

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        """Evaluate the document; statuses: pass, fail, not_applicable."""
        ...


_CHANGES = count(1)


class _CheckRegistry(Registry[Check]):
    """The registry of checks, numbering its changes so the suite's tuple is built once.

    Each change takes a new number from one counter (``next`` is atomic), so the number a
    reader saw differs from the current one whenever a change was written after it looked.
    """

    changes = 0

    def register(self, name: str, item: Check, *, replace: bool = False) -> Check:
        """Register ``item`` under ``name`` (see :meth:`Registry.register`)."""
        try:
            return super().register(name, item, replace=replace)
        finally:
            self.changes = next(_CHANGES)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (see :meth:`Registry.unregister`)."""
        try:
            super().unregister(name)
        finally:
            self.changes = next(_CHANGES)


CHECKS = _CheckRegistry(
    "check", builtins=("checks.builtin", "checks.render_cost"), entry_point_group="regua.checks"
)
"""Static checks by id, in registration order (the order the suite runs them)."""
_SUITE: list[tuple[int, tuple[Check, ...]]] = [(-1, ())]


def register_check(check: Check, *, replace: bool = False) -> Check:
    """Add a check to the registry (ids are unique unless ``replace``). Returns the check."""
    return CHECKS.register(check.id, check, replace=replace)


def unregister_check(check_id: str) -> None:
    """Remove a check (no error when it is absent)."""
    CHECKS.unregister(check_id)


def checks_in_registry() -> tuple[Check, ...]:
    """Every registered check in registration order, built-ins first.

    The tuple is built again only after a change to the registry (the count is read before the
    checks, so a change made meanwhile is seen by the next call).
    """
    CHECKS.load()
    seen, suite = _SUITE[0]
    if seen != CHECKS.changes:
        seen = CHECKS.changes
        suite = tuple(CHECKS.values())
        _SUITE[0] = (seen, suite)
    return suite
