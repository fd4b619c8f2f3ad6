"""Fixtures of the judges tests: a browser-backed mask renderer (skips without Chromium), the
structured pelican task with its bundled drawings, and a resvg rasteriser for the calibration
and perturbation tests."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tasks import TaskSpec, bundled_registry
from tests.conftest import REPO_ROOT
from tests.helpers.maskrender import MaskRenderer, chromium_available, mask_renderer

BASES = REPO_ROOT / "judges" / "calibration" / "data" / "bases"


@pytest.fixture(scope="module")
def masks() -> Iterator[MaskRenderer]:
    """Renders frames and part masks with Playwright + Debian Chromium.

    Module-scoped on purpose: Playwright's sync API holds the main thread's event loop while it
    runs, so a browser kept for the whole session would break later browser tests."""
    if not chromium_available():
        pytest.skip("Debian Chromium (/usr/bin/chromium) is not installed")
    with mask_renderer() as renderer:
        yield renderer


@pytest.fixture(scope="session")
def task() -> TaskSpec:
    """The structured pelican task."""
    return bundled_registry().get("pelican-bicycle-structured@1")


@pytest.fixture(scope="session")
def good_svg(samples_dir: Path) -> bytes:
    """The bundled structured sample (all 15 ids)."""
    return (samples_dir / "outputs" / "structured-good.svg").read_bytes()


@pytest.fixture(scope="session")
def base_svgs() -> dict[str, bytes]:
    """The bundled base drawings by name."""
    return {p.stem: p.read_bytes() for p in sorted(BASES.glob("*.svg"))}


Raster = Callable[[bytes], npt.NDArray[np.int16]]


@pytest.fixture(scope="session")
def raster() -> Raster:
    """Render SVG bytes to an RGB array with resvg (a dev dependency; skip when absent)."""
    resvg_py = pytest.importorskip("resvg_py", reason="resvg-py (dev extra) is not installed")
    from PIL import Image

    def render(svg: bytes) -> npt.NDArray[np.int16]:
        png = bytes(resvg_py.svg_to_bytes(svg_string=svg.decode("utf-8")))
        with Image.open(io.BytesIO(png)) as image:
            return np.asarray(image.convert("RGB")).astype(np.int16)

    return render
