"""Limits on model calls, one key per endpoint (:func:`regua.llm.endpoint.limit_key`).

One :class:`Limiter` protocol, taken around every attempt of every call (judges, pairwise judges
and generation alike): :class:`LocalLimiter` bounds one process (calls in flight at once and
calls per minute per key); the service installs a fleet-wide one on PostgreSQL (a lease table,
``service/pipeline/slots.py``) layered over it with :func:`install_limiter`, since ``regua`` has
no database. :func:`limiter_for` is the limiter in force.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol

from regua.settings import Settings


class Limiter(Protocol):
    """Slots of model calls by key."""

    def slot(self, key: str, hold_s: float) -> AbstractContextManager[None]:
        """Hold one slot of ``key`` for one attempt that lasts at most ``hold_s`` seconds."""
        ...


class _KeyLimit:
    """A semaphore of ``concurrency`` slots and an even spacing of ``per_minute`` calls."""

    def __init__(self, concurrency: int, per_minute: float) -> None:
        self._slots = threading.BoundedSemaphore(concurrency)
        self._interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def take(self) -> None:
        self._slots.acquire()
        if self._interval:
            with self._lock:
                now = time.monotonic()
                start = max(now, self._next)
                self._next = start + self._interval
            time.sleep(max(0.0, start - now))

    def give(self) -> None:
        self._slots.release()


class LocalLimiter:
    """In this process: ``concurrency`` calls in flight per key, ``per_minute`` (0: no limit)."""

    def __init__(self, concurrency: int, per_minute: float = 0.0) -> None:
        """Allow ``concurrency`` calls at once per key, at most ``per_minute`` a minute."""
        self.concurrency = concurrency
        self.per_minute = per_minute
        self._keys: dict[str, _KeyLimit] = {}
        self._taken: Counter[str] = Counter()
        self._busy: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _limit(self, key: str) -> _KeyLimit:
        with self._lock:
            found = self._keys.get(key)
            if found is None:
                found = self._keys[key] = _KeyLimit(self.concurrency, self.per_minute)
            return found

    @contextmanager
    def slot(self, key: str, hold_s: float) -> Iterator[None]:
        """Hold one slot of ``key`` (waiting for a free one, and for the rate when set)."""
        del hold_s  # a semaphore needs no lease: a slot goes back when the attempt ends
        limit = self._limit(key)
        limit.take()
        with self._lock:
            self._taken[key] += 1
            self._busy[key] += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy[key] -= 1
            limit.give()

    def taken(self, key: str) -> int:
        """How many slots of ``key`` this limiter has handed out (every attempt counts)."""
        with self._lock:
            return self._taken[key]

    def in_flight(self, key: str) -> int:
        """Slots of ``key`` held right now."""
        with self._lock:
            return self._busy[key]


class LayeredLimiter:
    """A slot of every limiter, taken in order (e.g. this process's, then the fleet's)."""

    def __init__(self, *limiters: Limiter) -> None:
        """Take a slot of each of ``limiters``, in this order, for each attempt."""
        self.limiters = limiters

    @contextmanager
    def slot(self, key: str, hold_s: float) -> Iterator[None]:
        """Hold one slot of ``key`` in every limiter."""
        with ExitStack() as stack:
            for limiter in self.limiters:
                stack.enter_context(limiter.slot(key, hold_s))
            yield


_LOCK = threading.Lock()
_LOCAL: dict[tuple[int, float], LocalLimiter] = {}
_installed: list[Limiter] = []


def local_limiter(concurrency: int, per_minute: float = 0.0) -> LocalLimiter:
    """This process's in-process limiter of these limits (one per pair of limits)."""
    with _LOCK:
        found = _LOCAL.get((concurrency, per_minute))
        if found is None:
            found = _LOCAL[(concurrency, per_minute)] = LocalLimiter(concurrency, per_minute)
        return found


def settings_limiter(settings: Settings | None) -> LocalLimiter:
    """The in-process limiter of ``REGUA_GENERATION_CONCURRENCY`` and ``_RATE_PER_MINUTE``."""
    if settings is None:
        fields = Settings.model_fields
        default_c = fields["generation_concurrency"].default
        default_r = fields["generation_rate_per_minute"].default
        return local_limiter(int(default_c), float(default_r))
    return local_limiter(settings.generation_concurrency, settings.generation_rate_per_minute)


def install_limiter(limiter: Limiter | None) -> Limiter | None:
    """Make ``limiter`` the one every call of this process takes (None: the in-process one).

    Installers stack: the newest one still installed is in force. Returns the limiter that was in
    force before (None: the in-process one).
    """
    with _LOCK:
        previous = _installed[-1] if _installed else None
        if limiter is not None:
            _installed.append(limiter)
        return previous


def uninstall_limiter(limiter: Limiter, previous: Limiter | None = None) -> None:
    """Take ``limiter`` off the stack of installed limiters, wherever it stands.

    Installers may close in any order: a closed one never stays in force (the next newest
    still installed takes over). ``previous`` is accepted for symmetry and not needed.
    """
    del previous
    with _LOCK:
        for i in range(len(_installed) - 1, -1, -1):
            if _installed[i] is limiter:
                del _installed[i]
                return


def limiter_for(settings: Settings | None) -> Limiter:
    """The limiter in force: the newest installed one, else the in-process one of ``settings``."""
    with _LOCK:
        installed = _installed[-1] if _installed else None
    return installed if installed is not None else settings_limiter(settings)
