"""The check extension point: the :class:`Check` protocol and the registry checks are added to.

Built-in checks register through :func:`register_check` exactly like a plugin would;
:mod:`checks.suite` loads them and runs the suite.
"""

from __future__ import annotations

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


CHECKS: Registry[Check] = Registry(
    "check", builtins=("checks.builtin", "checks.render_cost"), entry_point_group="regua.checks"
)
"""Static checks by id, in registration order (the order the suite runs them)."""


def register_check(check: Check, *, replace: bool = False) -> Check:
    """Add a check to the registry (ids are unique unless ``replace``). Returns the check."""
    return CHECKS.register(check.id, check, replace=replace)


def unregister_check(check_id: str) -> None:
    """Remove a check (no error when it is absent)."""
    CHECKS.unregister(check_id)


def checks_in_registry() -> tuple[Check, ...]:
    """Every registered check in registration order, built-ins first."""
    return tuple(CHECKS.values())
