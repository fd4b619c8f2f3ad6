"""Asking Chromium for a frame's PNG over DevTools."""

from __future__ import annotations

import base64
import time
from typing import Any

from playwright.sync_api import CDPSession
from playwright.sync_api import Error as PlaywrightError

CAPTURE_ATTEMPTS = 3
"""Captures asked of one frame when Chromium has no frame ready (``UNABLE_TO_CAPTURE``)."""
UNABLE_TO_CAPTURE = "Unable to capture screenshot"


def capture_png(cdp: CDPSession, params: dict[str, Any]) -> bytes:
    """``Page.captureScreenshot`` with ``params``, asked again when Chromium has no frame.

    Twice at most: seen on a loaded machine, where the pixels are not at fault.
    """
    for attempt in range(1, CAPTURE_ATTEMPTS + 1):
        try:
            data = cdp.send("Page.captureScreenshot", params)
            return base64.b64decode(data["data"])
        except PlaywrightError as exc:
            if UNABLE_TO_CAPTURE not in str(exc) or attempt == CAPTURE_ATTEMPTS:
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")  # the loop returns or raises
