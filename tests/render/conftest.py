"""Helpers for the render tests: task variants, rendering through the shared pool, pixel probes."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from service.pipeline.render_client import RenderOutput, render_artifact
from tasks import TaskSpec, bundled_registry

STATIC = "pelican-bicycle-static@1"
STRUCTURED = "pelican-bicycle-structured@1"
ANIMATED = "pelican-bicycle-animated@1"


def task(ref: str = STATIC, **changes: Any) -> TaskSpec:
    """A bundled task, optionally changed (``output``/``render``/``animation``/``mode`` keys are
    merged into the wire form). Changed tasks are test-only and never registered."""
    wire = bundled_registry().get(ref).to_wire()
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(wire.get(key), dict):
            wire[key] = {**wire[key], **value}
        else:
            wire[key] = value
    return TaskSpec.model_validate(wire)


def animated_task(times_hz: float = 2.0, observe_s: float = 3.5, **output: Any) -> TaskSpec:
    """The animated task with a custom sampling plan (and output changes)."""
    plan = {"loop_s": 4.0, "observe_s": observe_s, "sample_hz": times_hz, "boundary_offsets_s": []}
    changes: dict[str, Any] = {"animation": plan}
    if output:
        changes["output"] = output
    return task(ANIMATED, **changes)


def render(pool: Any, svg: str, spec: TaskSpec | None = None, **kw: Any) -> RenderOutput:
    """Render through the shared sandboxed pool."""
    return render_artifact(svg, spec or task(), pool, **kw)


def rgb(png: bytes) -> NDArray[np.uint8]:
    """PNG bytes as an (H, W, 3) array."""
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def grey(png: bytes) -> NDArray[np.uint8]:
    """Greyscale PNG bytes (masks) as an (H, W) array."""
    with Image.open(io.BytesIO(png)) as image:
        assert image.mode == "L", image.mode
        return np.asarray(image, dtype=np.uint8)


def colour_mask(png: bytes, colour: tuple[int, int, int], tol: int = 40) -> NDArray[np.bool_]:
    """Pixels within ``tol`` of ``colour``."""
    diff = np.abs(rgb(png).astype(np.int16) - np.array(colour, dtype=np.int16))
    return np.asarray(diff.max(axis=2) <= tol)


def centroid(mask: NDArray[np.bool_]) -> tuple[float, float]:
    """(x, y) centre of the True pixels."""
    ys, xs = np.nonzero(mask)
    assert xs.size, "empty mask"
    return float(xs.mean()), float(ys.mean())


def mask_of(out: RenderOutput, time_s: float, part: str, kind: str) -> NDArray[np.bool_]:
    """One mask of a render as a boolean array."""
    for mask in out.masks():
        if abs(mask.time_s - time_s) < 1e-9 and mask.part == part and mask.kind == kind:
            found: NDArray[np.bool_] = grey(mask.png) == 255
            return found

    raise KeyError((time_s, part, kind))
