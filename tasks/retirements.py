"""Bundled task versions retired from their pool by regua itself, each with the reason.

A retired version stays readable: its spec, its runs and their reports are kept, and it may
still be named where a frozen reference is wanted (re-scoring old runs, static checks). It is
listed as ``retired`` everywhere (``regua tasks list``, ``GET /v1/tasks``, reports), with the
reason below. Retirements an installation makes itself (``regua tasks retire``) live in its
database, beside these.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

RETIRED_BY = "regua"
"""Who retired a bundled version (shown as ``retired_by``)."""

BUNDLED_RETIREMENTS: Mapping[str, str] = MappingProxyType(
    {
        "pelican-bicycle-static@1": (
            "its criteria score conditions its prompt never states (B1's named parts, B2's "
            "joints, R2's feet on the pedals, R3's wing on the handlebar); use "
            "pelican-bicycle-restricted@1 (the same drawing with every scored condition stated) "
            "or pelican-bicycle-open@1 (the bare sentence, scored only on what it implies)"
        ),
    }
)
"""Task reference → why regua retired it from its pool."""


def bundled_retirement(ref: str) -> str | None:
    """Why regua retired the bundled version ``ref`` (None: not retired by regua)."""
    return BUNDLED_RETIREMENTS.get(ref)
