"""The command line's one error hook: a regua error ends a command with one message, exit 2.

Every command lets :class:`~regua.errors.ReguaError` (a bad task, an unknown profile, a setting
that does not parse, ...) and :class:`OSError` (a file that cannot be read or written) propagate;
:class:`ReguaGroup`, the class of the ``regua`` app, prints ``error: <message>`` on stderr and
exits with status 2 — never a traceback for a problem the user can fix. Any other exception is
a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from regua.errors import ReguaError

USAGE_EXIT = 2
"""Exit status of a command stopped by bad input or configuration (click's usage status)."""


class ReguaGroup(TyperGroup):
    """The ``regua`` command group: runs a command and turns user errors into one message."""

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a regua or file error prints ``error: ...`` and exits 2.

        ``ctx`` is typer's click context (typer vendors click, so its class is private).
        """
        try:
            return super().invoke(ctx)
        except (ReguaError, OSError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(USAGE_EXIT) from exc
