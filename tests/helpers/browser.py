"""Playwright pages and contexts of the tests wait like the tests' other clients.

Playwright's defaults (30 s for an action or a navigation) are deadlines a page can miss on a
loaded machine; a test's deadline only bounds a hang, so every page and context a test opens
passes through :func:`patient`.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

PATIENT_MS = 120_000
"""How long a test's browser waits for a navigation, a locator or an action."""


class _Waits(Protocol):
    def set_default_timeout(self, timeout: float) -> None: ...

    def set_default_navigation_timeout(self, timeout: float) -> None: ...


W = TypeVar("W", bound=_Waits)


def patient(target: W) -> W:
    """``target`` (a Playwright Page or BrowserContext) with the tests' generous deadlines."""
    target.set_default_timeout(PATIENT_MS)
    target.set_default_navigation_timeout(PATIENT_MS)
    return target
