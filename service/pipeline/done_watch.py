"""Waiting for a run to be done without polling: who waits in this process, and who wakes them.

``GET /v1/runs/{id}?wait_s=`` holds a request until the run is done. The transaction that marks
a run done announces it (:func:`announce_done`): on PostgreSQL with ``NOTIFY regua_run_done``,
which the server delivers at commit to every process listening (an API process runs one
listening connection, :class:`RunWatch`), and in the process itself once the transaction has
committed (the embedded executor). A waiter wakes on the announcement and reads the run's
status once; a slow safety tick remains for announcements that cannot arrive (a listening
connection being re-opened after a database restart: every waiter is woken when it is back).
On SQLite, where another process's announcements cannot arrive, waiters also look on the
quick ticks they always had.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy import event, text
from sqlalchemy.orm import Session

log = logging.getLogger("regua.watch")

CHANNEL = "regua_run_done"
"""The PostgreSQL notification channel; the payload is the run id."""
RECONNECT_S = 1.0
"""Pause before the listening connection is opened again after it failed."""


def libpq_url(url: str) -> str:
    """A SQLAlchemy PostgreSQL URL as libpq understands it (no ``+driver``)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+', 1)[0]}://{rest}"


Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


class RunWatch:
    """The requests of one process waiting for runs, woken when a run is announced done."""

    def __init__(self, pg_url: str | None) -> None:
        """Listen on the PostgreSQL database at ``pg_url`` (None: in-process announcements only).

        The listening connection opens with the first waiter.
        """
        self.pg_url = libpq_url(pg_url) if pg_url else None
        self._waiters: dict[str, set[Waiter]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def live(self) -> bool:
        """Whether every announcement reaches this process (its listener is connected).

        Never on SQLite: a ``regua worker`` of its own may finish runs there, and its
        announcements stay in its process (waiters keep looking on quick ticks as well).
        """
        return self._listening.is_set()

    @contextmanager
    def waiting(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set when ``run_id`` is announced done (enter before reading its status)."""
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(run_id, set()).add(waiter)
            if self.pg_url is not None and self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._listen, name="regua-run-watch", daemon=True
                )
                self._thread.start()
        try:
            yield waiter[1]
        finally:
            with self._lock:
                waiters = self._waiters.get(run_id)
                if waiters is not None:
                    waiters.discard(waiter)
                    if not waiters:
                        del self._waiters[run_id]

    def signal(self, run_id: str | None) -> None:
        """Wake the waiters of ``run_id`` (None: every waiter)."""
        with self._lock:
            if run_id is None:
                found = [w for ws in self._waiters.values() for w in ws]
            else:
                found = list(self._waiters.get(run_id, ()))
        for loop, woken in found:
            if not loop.is_closed():
                loop.call_soon_threadsafe(woken.set)

    def _listen(self) -> None:
        assert self.pg_url is not None
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.pg_url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._listening.set()
                    self.signal(None)  # announcements missed while it was away: look again
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            self.signal(note.payload)
            except psycopg.Error as exc:
                log.warning("listening for finished runs failed (%s); opening it again", exc)
            self._listening.clear()
            self._stop.wait(RECONNECT_S)

    def close(self) -> None:
        """Stop listening (within about a second)."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(2.0)


def announce_done(session: Session, run_id: str, watch: RunWatch) -> None:
    """Announce, in the transaction that marks ``run_id`` done, that it is (once committed)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(
            text("SELECT pg_notify(:channel, :run_id)"), {"channel": CHANNEL, "run_id": run_id}
        )

    def committed(_session: Session) -> None:
        watch.signal(run_id)

    event.listen(session, "after_commit", committed, once=True)
