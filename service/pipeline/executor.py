"""The durable executor: threads that claim runs from the database and advance their stages.

A claim is a lease (owner + expiry) on the run row, taken with ``SELECT … FOR UPDATE SKIP LOCKED``
on PostgreSQL and under the process-wide writer lock on SQLite. A heartbeat renews the leases this
process holds. On start-up, leases of dead processes on this host are released at once, so a restart
after ``kill -9`` resumes every unfinished run immediately; leases of other hosts expire. Stopping
(SIGTERM) hands the runs in progress back to the queue at once: a stage computing then writes
nothing (its lease is gone), and another worker resumes the run from its last recorded stage.

Lanes: at most ``heavy_slots`` runs of the heavy lane (see :mod:`.lanes`) are rendered at once in
this process, so the other threads (and at least one render worker) stay free for cheap work. A
thread takes a heavy run first while a heavy slot is free, cheap work otherwise; within a lane the
submitters take turns (:mod:`.fair`). A run found heavy by its check while every heavy slot is taken
is handed back to the queue before its render (its claim given back) and waits in the heavy lane.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import case, func, select, update
from sqlalchemy.orm import Session

from service.pipeline.fair import next_run
from service.pipeline.lanes import CHEAP, HEAVY, Lane
from service.pipeline.runner import (
    LeaseLostError,
    Machinery,
    Stage,
    StageContext,
    Writer,
    Written,
    advance,
)
from service.pipeline.stages import STAGES
from service.storage import Database, Run, StageRecord, utcnow
from service.storage.blobs import BlobStore

log = logging.getLogger("regua.executor")

#: A run claimed this many times without finishing is given up as incomplete (poison pill).
MAX_CLAIMS = 6


class LaneFullError(LeaseLostError):
    """The run turned out heavy and every heavy slot of this process is taken: hand it back."""


def make_owner() -> str:
    """An owner id naming this host and process."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release_dead_local_leases(db: Database) -> int:
    """Requeue runs leased by processes of this host that no longer exist; returns the count."""
    host = socket.gethostname()
    freed = 0
    with db.write() as s:
        rows = s.execute(
            select(Run.id, Run.lease_owner).where(
                Run.status != "done", Run.lease_owner.is_not(None)
            )
        ).all()
        for run_id, owner in rows:
            parts = str(owner).split(":")
            if len(parts) < 2 or parts[0] != host or not parts[1].isdigit():
                continue
            pid = int(parts[1])
            if pid != os.getpid() and _pid_alive(pid):
                continue
            s.execute(
                update(Run)
                .where(Run.id == run_id)
                .values(status="queued", lease_owner=None, lease_expires_at=None)
            )
            freed += 1
    return freed


def queue_depth(db: Database) -> int:
    """Runs accepted but not finished."""
    with db.read() as s:
        return int(s.scalar(select(func.count(Run.id)).where(Run.status != "done")) or 0)


class Executor:
    """In-process worker threads pulling runs from the database."""

    def __init__(
        self,
        db: Database,
        blobs: BlobStore,
        machinery: Machinery,
        *,
        threads: int = 2,
        lease_s: float = 300.0,
        poll_s: float = 0.5,
        stages: list[Stage] | None = None,
        heavy_slots: int | None = None,
    ) -> None:
        """Set up ``threads`` workers (not started yet) that lease runs for ``lease_s`` seconds.

        Idle workers poll for queued runs every ``poll_s`` seconds; ``stages`` defaults to the
        standard pipeline. At most ``heavy_slots`` heavy-lane runs are in progress at once
        (default: half the threads, at least one).
        """
        self.db = db
        self.blobs = blobs
        self.machinery = machinery
        self.threads = max(1, threads)
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.stages = stages or STAGES
        self.owner = make_owner()
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._workers: list[threading.Thread] = []
        self.processed = 0
        self.heavy_slots = max(1, heavy_slots if heavy_slots is not None else self.threads // 2)
        self._heavy: set[str] = set()
        self._claim_lock = threading.Lock()

    def start(self) -> None:
        """Release dead local leases and start the worker and heartbeat threads."""
        freed = release_dead_local_leases(self.db)
        if freed:
            log.warning("requeued %d run(s) left by a dead process", freed)
        for i in range(self.threads):
            t = threading.Thread(target=self._loop, name=f"regua-exec-{i}", daemon=True)
            t.start()
            self._workers.append(t)
        hb = threading.Thread(target=self._heartbeat, name="regua-heartbeat", daemon=True)
        hb.start()
        self._workers.append(hb)

    def stop(self, timeout: float = 3.0) -> None:
        """Stop taking work, hand the runs in progress back to the queue, wait for the threads."""
        self.request_stop()
        self.join(timeout)

    def request_stop(self) -> int:
        """Stop taking work and hand every run this process holds back to the queue at once.

        The runs become ``queued`` with no lease (the claim they used is given back), so any
        worker resumes them from their last recorded stage. A stage still computing here
        finds its lease gone when it comes to write and writes nothing. Returns the count.
        """
        self._stop.set()
        self.wake()
        with self.db.write() as s:
            handed = s.execute(
                update(Run)
                .where(Run.lease_owner == self.owner, Run.status != "done")
                .values(
                    status="queued",
                    lease_owner=None,
                    lease_expires_at=None,
                    # the claim is given back (a stop is no crash), unless the run was abandoned
                    claims=case((Run.claims > MAX_CLAIMS, Run.claims), else_=Run.claims - 1),
                )
            )
        count = int(getattr(handed, "rowcount", 0) or 0)
        if count:
            log.warning("handed %d unfinished run(s) back to the queue", count)
        return count

    def join(self, timeout: float = 3.0) -> bool:
        """Wait up to ``timeout`` seconds in all for the threads; True when every one ended."""
        deadline = time.monotonic() + timeout
        for t in self._workers:
            t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._workers)

    def wake(self) -> None:
        """Tell idle workers that new work arrived."""
        with self._wake:
            self._wake.notify_all()

    def claim(self) -> str | None:
        """Lease the claimable run whose turn it is, or None.

        A heavy-lane run first while this process has a free heavy slot, else a cheap one (or
        one not checked yet); within the lane, the submitter with the fewest runs in progress.
        """
        with self._claim_lock:
            lanes: tuple[Lane, ...] = (HEAVY, CHEAP) if self._heavy_free() else (CHEAP,)
            now = utcnow()
            with self.db.write() as s:
                run = None
                for lane in lanes:
                    run = next_run(s, lane, now, lock=not self.db.is_sqlite)
                    if run is not None:
                        break
                if run is None:
                    return None
                self._lease(s, run, now)
                if run.lane == HEAVY:
                    self._heavy.add(run.id)
                return run.id

    def _lease(self, s: Session, run: Run, now: datetime) -> None:
        run.status = "running"
        run.lease_owner = self.owner
        run.lease_expires_at = now + timedelta(seconds=self.lease_s)
        run.claims = (run.claims or 0) + 1
        run.claimed_at = now
        if run.claims == MAX_CLAIMS + 1:
            s.add(
                StageRecord(
                    run_id=run.id,
                    stage="abandon",
                    version="1",
                    status="incomplete",
                    detail={"cause": f"abandoned after {MAX_CLAIMS} claims"},
                )
            )

    def _heavy_free(self) -> bool:
        return len(self._heavy) < self.heavy_slots

    def _admit_render(self, run_id: str) -> None:
        """Before a render: a heavy run needs a heavy slot of this process, else it goes back.

        Raises:
            LaneFullError: the run is heavy and every heavy slot is taken.
        """
        with self.db.read() as s:
            lane = s.scalar(select(Run.lane).where(Run.id == run_id))
        if lane != HEAVY:
            return
        with self._claim_lock:
            if run_id in self._heavy:
                return
            if not self._heavy_free():
                raise LaneFullError(f"run {run_id} is heavy and every heavy slot is taken")
            self._heavy.add(run_id)

    def process(self, run_id: str) -> bool:
        """Advance one claimed run; on a stage error the lease is released to retry later."""
        stages = self.stages
        with self.db.read() as s:
            run = s.get(Run, run_id)
            if run is not None and run.claims > MAX_CLAIMS:
                stages = [st for st in self.stages if st.name == "finalize"]
        try:
            done = advance(self.db, self.blobs, self.machinery, run_id, self._leased(stages))
        except LaneFullError:
            self._hand_back(run_id)
            return False
        except LeaseLostError:
            log.info("run %s was handed back while in progress", run_id)
            return False
        except Exception:
            log.exception("run %s could not advance", run_id)
            done = False
        finally:
            with self._claim_lock:
                self._heavy.discard(run_id)
        if not done:
            with self.db.write() as s:
                s.execute(
                    update(Run)
                    .where(Run.id == run_id, Run.lease_owner == self.owner)
                    .values(status="queued", lease_owner=None, lease_expires_at=None)
                )
        self.processed += 1
        return done

    def _hand_back(self, run_id: str) -> None:
        """Give a run back to the queue with its claim (it waits in its lane for a slot)."""
        with self.db.write() as s:
            s.execute(
                update(Run)
                .where(Run.id == run_id, Run.lease_owner == self.owner)
                .values(
                    status="queued",
                    lease_owner=None,
                    lease_expires_at=None,
                    claims=Run.claims - 1,
                )
            )

    def _leased(self, stages: list[Stage]) -> list[Stage]:
        """The stages, each refusing to start once stopping and to write without the lease."""
        return [Stage(st.name, st.version, self._guard(st)) for st in stages]

    def _guard(self, stage: Stage) -> Callable[[StageContext], Writer]:
        def compute(ctx: StageContext) -> Writer:
            if self._stop.is_set():
                raise LeaseLostError(f"stopping before stage {stage.name}")
            if stage.name == "render":
                self._admit_render(ctx.run_id)
            writer = stage.compute(ctx)

            def write(s: Session) -> Written:
                self._check_lease(s, ctx.run_id)
                return writer(s)

            return write

        return compute

    def _check_lease(self, s: Session, run_id: str) -> None:
        """Raise :class:`LeaseLostError` unless this process still holds the run (row locked)."""
        run = s.get(Run, run_id, with_for_update=not self.db.is_sqlite, populate_existing=True)
        if run is None or run.lease_owner != self.owner:
            raise LeaseLostError(f"run {run_id} is no longer leased by {self.owner}")

    def run_once(self) -> bool:
        """Claim and process one run; False when the queue was empty (used by tests/workers)."""
        run_id = self.claim()
        if run_id is None:
            return False
        self.process(run_id)
        return True

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once()
            except Exception:
                log.exception("executor loop error")
                worked = False
            if not worked:
                with self._wake:
                    self._wake.wait(self.poll_s)

    def _heartbeat(self) -> None:
        interval = max(1.0, self.lease_s / 3)
        while not self._stop.wait(interval):
            try:
                with self.db.write() as s:
                    s.execute(
                        update(Run)
                        .where(Run.lease_owner == self.owner, Run.status == "running")
                        .values(lease_expires_at=utcnow() + timedelta(seconds=self.lease_s))
                    )
            except Exception:
                log.exception("lease heartbeat failed")
