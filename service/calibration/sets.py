"""Calibration sets by name: the bundled one, a ``.jsonl`` set, or a CSV folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judges.calibration import CalibrationItem, CalibrationSet, load_bundled_set
from judges.calibration.setio import read_set
from regua.errors import NotFoundError, ReguaError

BUNDLED_NAMES = ("bundled", "pelican-bicycle-structured-perturbations@1")
"""Names of the set packaged with regua."""

ArtifactBytes = Callable[[CalibrationItem], bytes]
"""The drawing (or raw reply) an item labels."""


def set_exists(name: str) -> bool:
    """Whether ``name`` names the bundled set or an existing file or folder."""
    return name in BUNDLED_NAMES or Path(name).exists()


def load_set(name: str) -> tuple[CalibrationSet, ArtifactBytes]:
    """A set and a function returning each item's artifact bytes."""
    if name in BUNDLED_NAMES:
        bundle = load_bundled_set()
        return bundle.calibration_set, lambda item: bundle.artifacts[item.artifact_sha256]
    path = Path(name)
    if not path.exists():
        raise NotFoundError(f"no calibration set {name!r} (bundled, a .jsonl set or a folder)")
    cal_set = read_set(path)
    root = path if path.is_dir() else path.parent

    def artifact(item: CalibrationItem) -> bytes:
        if not item.artifact_file:
            raise ReguaError(f"item {item.item_id} names no artifact file")
        return (root / item.artifact_file).read_bytes()

    return cal_set, artifact
