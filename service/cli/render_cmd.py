"""CLI commands of this area (registered on the main app by :func:`register`)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
