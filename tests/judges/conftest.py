"""Fixtures of the judges tests: a browser-backed mask renderer (skips without Chromium)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.maskrender import MaskRenderer, chromium_available, mask_renderer


@pytest.fixture(scope="module")
def masks() -> Iterator[MaskRenderer]:
    """Renders frames and part masks with Playwright + Debian Chromium.

    Module-scoped on purpose: Playwright's sync API holds the main thread's event loop while it
    runs, so a browser kept for the whole session would break later browser tests."""
    if not chromium_available():
        pytest.skip("Debian Chromium (/usr/bin/chromium) is not installed")
    with mask_renderer() as renderer:
        yield renderer
