"""Which pytest-xdist worker this process is (plain functions, importable from anywhere)."""

from __future__ import annotations

import os


def worker_id() -> str:
    """This process's xdist worker id (``gw0``, ``gw1``, ...), or ``main`` when not under xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def worker_index() -> int:
    """0 for ``gw0`` and for a run without xdist, N for ``gwN``."""
    name = worker_id()
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


def worker_count() -> int:
    """How many xdist workers run this session (1 when not under xdist)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
