"""Calibration sets by name: the bundled one, a ``.jsonl`` set, a CSV set folder, or a label folder.

A *label folder* holds drawings (SVG files, or raw model replies from which the SVG is
extracted) and a ``labels.csv`` (``file, criterion, status, annotator[, time, evidence]``); it is
labelled against the structured pelican task unless another task is named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from checks.extract import extract_svg
from judges.calibration import CalibrationItem, CalibrationSet, load_bundled_set
from judges.calibration.labeltable import DEFAULT_TASK, is_label_folder, read_label_folder
from judges.calibration.setio import read_set
from regua.errors import InputError, NotFoundError, ReguaError
from tasks import TaskRegistry, bundled_registry

_SVG_ELEMENT = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?svg[\s/>]", re.I)

BUNDLED_NAMES = ("bundled", "pelican-bicycle-structured-perturbations@1")
"""Names of the set packaged with regua."""

ArtifactBytes = Callable[[CalibrationItem], bytes]
"""The drawing an item labels (SVG bytes; a raw reply's extracted SVG)."""
LoadedSet = tuple[CalibrationSet, ArtifactBytes]
"""A set with its artifacts."""


def set_exists(name: str) -> bool:
    """Whether ``name`` names the bundled set or an existing file or folder."""
    return name in BUNDLED_NAMES or Path(name).exists()


def drawing_problem(name: str, data: bytes) -> str | None:
    """Why a labelled file is not a drawing regua can calibrate on (None: it is one).

    A file is an SVG document, or a raw model reply from which exactly one SVG is extracted.
    """
    found = extract_svg(data)
    if found.svg_text is None or not _SVG_ELEMENT.search(found.svg_text):
        return f"{name}: not an SVG document (no <svg> element found)"
    if found.candidates > 1:
        return (
            f"{name}: {found.candidates} candidate SVG documents in one file; a labelled file "
            "holds one drawing"
        )
    return None


def check_drawings(files: Mapping[str, bytes]) -> None:
    """Refuse the whole set when any file is not one drawing (every bad file named).

    Checked before anything is rendered or stored: a set is taken all or nothing.
    """
    problems = [p for name in sorted(files) if (p := drawing_problem(name, files[name]))]
    if problems:
        raise InputError(
            f"{len(problems)} of {len(files)} labelled file(s) refused, nothing was stored: "
            + "; ".join(problems)
        )


def svg_of(name: str, data: bytes) -> bytes:
    """The SVG of a labelled file: an ``.svg`` as it is, anything else a raw reply to extract."""
    if name.lower().endswith(".svg"):
        return data
    found = extract_svg(data)
    if found.svg_text is None:
        raise InputError(f"{name}: no SVG found in the reply ({found.status})")
    return found.svg_text.encode("utf-8")


def files_artifact(files: Mapping[str, bytes]) -> ArtifactBytes:
    """The artifact function of a label folder's files (by the item's file name)."""

    def artifact(item: CalibrationItem) -> bytes:
        name = item.artifact_file or ""
        if name not in files:
            raise ReguaError(f"item {item.item_id} names no file of the set")
        return svg_of(name, files[name])

    return artifact


def load_set(
    name: str, task_ref: str | None = None, registry: TaskRegistry | None = None
) -> LoadedSet:
    """A set and a function returning each item's artifact bytes.

    ``task_ref`` names the task of a label folder (default: the structured pelican task), looked
    up in ``registry`` (default: the bundled tasks); the other kinds of set carry their task.
    Every file of a label folder must be one drawing (:func:`check_drawings`).
    """
    if name in BUNDLED_NAMES:
        bundle = load_bundled_set()
        return bundle.calibration_set, lambda item: bundle.artifacts[item.artifact_sha256]
    path = Path(name)
    if not path.exists():
        raise NotFoundError(f"no calibration set {name!r} (bundled, a .jsonl set or a folder)")
    if is_label_folder(path):
        task = (registry or bundled_registry()).get(task_ref or DEFAULT_TASK)
        folder = read_label_folder(path, task)
        check_drawings(folder.files)
        return folder.calibration_set, files_artifact(folder.files)
    cal_set = read_set(path)
    root = path if path.is_dir() else path.parent

    def artifact(item: CalibrationItem) -> bytes:
        if not item.artifact_file:
            raise ReguaError(f"item {item.item_id} names no artifact file")
        return (root / item.artifact_file).read_bytes()

    return cal_set, artifact
