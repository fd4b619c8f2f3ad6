"""The Debian Chromium that the web page tests drive with Playwright.

Every new browser context (a headless window) of a default launch loads two
``chrome://omnibox-popup.top-chrome`` pages in a WebUI renderer of its own (the worker's launch
turns them off for the same reason, see :mod:`render.launch`): ~0.33 CPU s per context, measured
on ten contexts (7.2-7.7 against 4.0-4.2 CPU s for the whole browser). The pages under test
never use the omnibox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ("--no-sandbox", "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup")


def launch_chromium(playwright: Any) -> Any:
    """Debian Chromium launched by ``playwright`` (a started sync Playwright) for page tests."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(LAUNCH_ARGS))
