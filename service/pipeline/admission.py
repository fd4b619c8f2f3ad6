"""Admission of submissions: batch size, per-token rate, queue capacity and per-submitter share.

Everything here is decided before a byte is written, so a refused request stores nothing:

* a batch larger than the queue, or than one submitter's share of it, can never be accepted
  (:class:`BatchTooLargeError`, 422: retrying cannot help);
* a token over its submission rate is refused by a token bucket on an injected clock
  (:class:`RateLimitedError`, 429 with the seconds until the bucket holds a request again);
* a full queue (:class:`BackpressureError`) or a submitter whose unfinished runs already fill its
  share (:class:`QueueShareError`) answer 429 with ``Retry-After`` = the runs that must finish
  first divided by the recent throughput.

Submissions without a token (the CLI and tests inside the service process) skip the per-token
checks. The rate limiter lives in the process: with several API processes each has its own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from regua.errors import BackpressureError, BatchTooLargeError, QueueShareError, RateLimitedError
from regua.settings import Settings
from service.storage import Run
from service.storage.models import utcnow

Clock = Callable[[], float]
"""Seconds on a monotonic clock (``time.monotonic`` unless a test injects its own)."""

THROUGHPUT_WINDOW_S = 300.0
"""Runs finished in this many recent seconds estimate how fast the queue drains."""
MIN_THROUGHPUT = 0.5
"""Runs per second assumed when fewer have finished recently (a cold or idle service)."""
MAX_RETRY_AFTER_S = 600


@dataclass(frozen=True)
class Limits:
    """The admission limits in force (from :class:`Settings`)."""

    capacity: int
    share: int
    """Unfinished runs one submitter may have queued at once."""
    rate_per_minute: float
    """Submission requests per token per minute; 0 switches the limit off."""
    burst: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The limits of ``settings``."""
        capacity = settings.queue_capacity
        share = max(1, math.floor(capacity * settings.submitter_queue_share))
        return cls(capacity, share, settings.submit_rate_per_minute, settings.submit_burst)


class RateLimiter:
    """A token bucket per API token: ``burst`` requests at once, refilled at the set rate."""

    def __init__(self, per_minute: float, burst: int, clock: Clock = time.monotonic) -> None:
        """Allow ``per_minute`` requests per token on average, ``burst`` in a row."""
        self.per_s = per_minute / 60.0
        self.burst = burst
        self.clock = clock
        self._buckets: dict[int, tuple[float, float]] = {}  # token id -> (level, at)
        self._lock = threading.Lock()

    def take(self, token_id: int) -> None:
        """Spend one request of ``token_id``; raises :class:`RateLimitedError` when none is left."""
        if self.per_s <= 0:
            return
        with self._lock:
            now = self.clock()
            level, at = self._buckets.get(token_id, (float(self.burst), now))
            level = min(float(self.burst), level + (now - at) * self.per_s)
            if level < 1.0:
                self._buckets[token_id] = (level, now)
                wait = math.ceil((1.0 - level) / self.per_s)
                raise RateLimitedError(
                    f"too many submissions: this token may send {self.per_s * 60:g} per minute "
                    f"({self.burst} in a row); retry in {wait} s",
                    retry_after_s=max(1, wait),
                )
            self._buckets[token_id] = (level - 1.0, now)


class Admission:
    """The admission checks of one service process."""

    def __init__(self, limits: Limits, clock: Clock = time.monotonic) -> None:
        """Check against ``limits``; the rate limiter reads ``clock``."""
        self.limits = limits
        self.rate = RateLimiter(limits.rate_per_minute, limits.burst, clock)

    def before_writing(self, size: int, token_id: int | None) -> None:
        """The checks that need no database: batch size, then the token's rate."""
        cap, share = self.limits.capacity, self.limits.share
        if size > cap:
            raise BatchTooLargeError(
                f"a batch of {size} runs can never be accepted: the queue holds {cap}"
            )
        if token_id is not None and size > share:
            raise BatchTooLargeError(
                f"a batch of {size} runs can never be accepted: one submitter may have "
                f"{share} runs waiting (REGUA_SUBMITTER_QUEUE_SHARE of {cap})"
            )
        if token_id is not None:
            self.rate.take(token_id)

    def check_queue(self, s: Session, size: int, token_id: int | None) -> None:
        """Refuse (429) when the queue, or the submitter's share of it, cannot take ``size``.

        The queue's depth and the submitter's own unfinished runs are counted in one statement.
        """
        depth, own = unfinished_runs(s, token_id)
        cap = self.limits.capacity
        if depth + size > cap:
            wait = retry_after(s, depth + size - cap)
            raise BackpressureError(
                f"queue full ({depth} of {cap} runs waiting); retry in {wait} s",
                retry_after_s=wait,
            )
        if token_id is None:
            return
        share = self.limits.share
        if own + size > share:
            wait = retry_after(s, own + size - share)
            raise QueueShareError(
                f"this submitter has {own} runs waiting and may have {share}; "
                f"{own + size - share} of them must finish first (retry in {wait} s)",
                retry_after_s=wait,
            )


def unfinished_runs(s: Session, token_id: int | None) -> tuple[int, int]:
    """Runs not done: all of them, and those of ``token_id`` (0 without a token)."""
    every = func.count(Run.id)
    if token_id is None:
        return int(s.scalar(select(every).where(Run.status != "done")) or 0), 0
    mine = func.count(Run.id).filter(Run.submitted_by == token_id)
    depth, own = s.execute(select(every, mine).where(Run.status != "done")).one()
    return int(depth or 0), int(own or 0)


def retry_after(s: Session, excess: int) -> int:
    """Seconds until ``excess`` more runs have likely finished, at the recent throughput."""
    since = utcnow() - timedelta(seconds=THROUGHPUT_WINDOW_S)
    recent = select(func.count(Run.id)).where(Run.finished_at >= since)
    finished = int(s.scalar(recent) or 0)
    per_s = max(MIN_THROUGHPUT, finished / THROUGHPUT_WINDOW_S)
    return max(1, min(MAX_RETRY_AFTER_S, math.ceil(excess / per_s)))
