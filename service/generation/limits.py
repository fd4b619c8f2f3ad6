"""Per-provider limits in this process: calls in flight at once, and calls per minute."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from regua.settings import Settings


class ProviderLimit:
    """A semaphore of ``concurrency`` slots and an even spacing of ``per_minute`` calls."""

    def __init__(self, concurrency: int, per_minute: float) -> None:
        """Allow ``concurrency`` calls at once, at most ``per_minute`` a minute (0: no limit)."""
        self.concurrency = concurrency
        self._slots = threading.BoundedSemaphore(concurrency)
        self._interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot for one call (waiting for the rate when one is set)."""
        with self._slots:
            if self._interval:
                with self._lock:
                    now = time.monotonic()
                    start = max(now, self._next)
                    self._next = start + self._interval
                time.sleep(max(0.0, start - now))
            yield


_LIMITS: dict[tuple[str, str, int, float], ProviderLimit] = {}
_LOCK = threading.Lock()


def provider_limit(settings: Settings, api: str, base_url: str | None) -> ProviderLimit:
    """The process's limit of one provider (api + base URL), shared by every generation."""
    concurrency, rate = settings.generation_concurrency, settings.generation_rate_per_minute
    key = (api, base_url or "", concurrency, rate)
    with _LOCK:
        limit = _LIMITS.get(key)
        if limit is None:
            limit = ProviderLimit(concurrency, rate)
            _LIMITS[key] = limit
        return limit
