"""A fleet-wide limit on model calls in flight per endpoint, kept in PostgreSQL.

``regua_slots`` (migration ``0800_queue``) holds ``limit`` rows per key; taking a slot is a lease
(holder + expiry) on a free or expired row, claimed with ``FOR UPDATE SKIP LOCKED``. Every process
of the fleet takes its slots from the same table, so the limit holds across processes and
machines, not per process; a slot of a worker killed mid-call frees itself when its lease ends.
:class:`FleetLimiter` is :mod:`regua.llm`'s limiter on it (judges and generation alike, one key
per API + base URL), installed by the service context on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Iterator, Sequence

from sqlalchemy import text

from regua.errors import ReguaError
from service.storage import Database


class SlotBusyError(ReguaError):
    """Every slot of a key stayed taken while waiting (the job is retried later)."""


_FILL = text(
    "INSERT INTO regua_slots (key, slot) SELECT :key, g FROM generate_series(0, :limit - 1) g "
    "ON CONFLICT DO NOTHING"
)
_TAKE = text(
    "UPDATE regua_slots SET holder = :holder, expires_at = now() + make_interval(secs => :ttl) "
    "WHERE (key, slot) = (SELECT key, slot FROM regua_slots WHERE key = :key AND slot < :limit "
    "AND (holder IS NULL OR expires_at < now()) ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) "
    "RETURNING slot"
)
_GIVE = text(
    "UPDATE regua_slots SET holder = NULL, expires_at = NULL "
    "WHERE key = :key AND slot = :slot AND holder = :holder"
)
_BUSY = text(
    "SELECT count(*) FROM regua_slots WHERE key = :key AND holder IS NOT NULL "
    "AND expires_at >= now()"
)


class FleetSlots:
    """Leases on ``regua_slots`` for one holder (a worker)."""

    def __init__(self, db: Database, holder: str, *, ttl_s: float = 180.0) -> None:
        """Take slots as ``holder``; a slot not given back frees itself after ``ttl_s``."""
        self.db = db
        self.holder = holder
        self.ttl_s = ttl_s

    def try_take(self, key: str, limit: int, ttl_s: float | None = None) -> int | None:
        """Take a free slot of ``key`` (at most ``limit`` in flight); its number, or None.

        The lease lasts ``ttl_s`` (default: the holder's).
        """
        ttl = self.ttl_s if ttl_s is None else ttl_s
        params = {"key": key, "limit": limit, "holder": self.holder, "ttl": ttl}
        with self.db.write() as s:
            s.execute(_FILL, params)
            slot = s.scalar(_TAKE, params)
        return None if slot is None else int(slot)

    def give(self, key: str, slot: int) -> None:
        """Give a slot back."""
        with self.db.write() as s:
            s.execute(_GIVE, {"key": key, "slot": slot, "holder": self.holder})

    def in_flight(self, key: str) -> int:
        """Slots of ``key`` leased right now, by any worker."""
        with self.db.read() as s:
            return int(s.scalar(_BUSY, {"key": key}) or 0)

    @contextlib.contextmanager
    def hold(
        self, keys: Sequence[str], limit: int, *, wait_s: float = 30.0, poll_s: float = 0.1
    ) -> Iterator[None]:
        """Hold one slot of each key (taken in sorted order) for the ``with`` block.

        Raises:
            SlotBusyError: a key had no free slot for ``wait_s`` seconds.
        """
        taken: list[tuple[str, int]] = []
        try:
            for key in sorted(set(keys)):
                deadline = time.monotonic() + wait_s
                slot = self.try_take(key, limit)
                while slot is None:
                    if time.monotonic() > deadline:
                        raise SlotBusyError(f"all {limit} slots of {key} stayed busy {wait_s}s")
                    time.sleep(poll_s)
                    slot = self.try_take(key, limit)
                taken.append((key, slot))
            yield
        finally:
            for key, slot in taken:
                self.give(key, slot)


MAX_POLL_S = 1.0
"""The longest wait between two tries for a fleet slot."""
MAX_KEY = 200
"""``regua_slots.key`` is varchar(200): a longer endpoint key is stored by its hash."""


def slot_key(key: str) -> str:
    """The table key of a limiter key (``llm:`` + the key, or its sha256 when too long)."""
    row = f"llm:{key}"
    return row if len(row) <= MAX_KEY else f"llm:sha256:{hashlib.sha256(key.encode()).hexdigest()}"


class FleetLimiter:
    """At most ``limit`` model calls in flight per endpoint key across the whole fleet.

    Waits for a free slot as long as it takes (a slot held by a dead process frees itself when
    its lease ends), polling at ``poll_s``, doubling up to :data:`MAX_POLL_S`.
    """

    def __init__(self, db: Database, holder: str, limit: int, *, poll_s: float = 0.05) -> None:
        """Lease slots of ``db``'s table as ``holder``."""
        self.slots = FleetSlots(db, holder)
        self.limit = limit
        self.poll_s = poll_s

    @contextlib.contextmanager
    def slot(self, key: str, hold_s: float) -> Iterator[None]:
        """Hold one fleet slot of ``key`` for one attempt (leased for ``hold_s`` seconds)."""
        row, pauses = slot_key(key), self._pauses()
        while (taken := self.slots.try_take(row, self.limit, hold_s)) is None:
            time.sleep(next(pauses))
        try:
            yield
        finally:
            self.slots.give(row, taken)

    def in_flight(self, key: str) -> int:
        """Slots of ``key`` leased right now, by any process."""
        return self.slots.in_flight(slot_key(key))

    def _pauses(self) -> Iterator[float]:
        """Waits between tries: doubling from ``poll_s`` up to :data:`MAX_POLL_S`."""
        pause = self.poll_s
        while True:
            yield pause
            pause = min(MAX_POLL_S, pause * 2)
