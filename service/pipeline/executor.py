"""The durable executor: threads that claim runs from the database and advance their stages.

A claim is a lease (owner + expiry) on the run row, taken with ``SELECT … FOR UPDATE SKIP LOCKED``
on PostgreSQL and under the process-wide writer lock on SQLite. A heartbeat renews the leases this
process holds. On start-up, leases of dead processes on this host are released at once, so a restart
after ``kill -9`` resumes every unfinished run immediately; leases of other hosts expire.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from datetime import timedelta

from sqlalchemy import func, or_, select, update

from service.pipeline.runner import Machinery, Stage, advance
from service.pipeline.stages import STAGES
from service.storage import Database, Run, StageRecord, utcnow
from service.storage.blobs import BlobStore

log = logging.getLogger("regua.executor")

#: A run claimed this many times without finishing is given up as incomplete (poison pill).
MAX_CLAIMS = 6


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
    ) -> None:
        """Set up ``threads`` workers (not started yet) that lease runs for ``lease_s`` seconds.

        Idle workers poll for queued runs every ``poll_s`` seconds; ``stages`` defaults to the
        standard pipeline.
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

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking work and wait for the threads (a run in progress keeps its lease)."""
        self._stop.set()
        self.wake()
        for t in self._workers:
            t.join(timeout)

    def wake(self) -> None:
        """Tell idle workers that new work arrived."""
        with self._wake:
            self._wake.notify_all()

    def claim(self) -> str | None:
        """Lease the oldest claimable run, or None."""
        now = utcnow()
        with self.db.write() as s:
            q = (
                select(Run)
                .where(
                    Run.status != "done",
                    or_(Run.lease_expires_at.is_(None), Run.lease_expires_at < now),
                )
                .order_by(Run.submitted_at, Run.id)
                .limit(1)
            )
            if not self.db.is_sqlite:
                q = q.with_for_update(skip_locked=True)
            run = s.scalars(q).first()
            if run is None:
                return None
            run.status = "running"
            run.lease_owner = self.owner
            run.lease_expires_at = now + timedelta(seconds=self.lease_s)
            run.claims = (run.claims or 0) + 1
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
            return run.id

    def process(self, run_id: str) -> bool:
        """Advance one claimed run; on a stage error the lease is released to retry later."""
        stages = self.stages
        with self.db.read() as s:
            run = s.get(Run, run_id)
            if run is not None and run.claims > MAX_CLAIMS:
                stages = [st for st in self.stages if st.name == "finalize"]
        try:
            done = advance(self.db, self.blobs, self.machinery, run_id, stages)
        except Exception:
            log.exception("run %s could not advance", run_id)
            done = False
        if not done:
            with self.db.write() as s:
                s.execute(
                    update(Run)
                    .where(Run.id == run_id, Run.lease_owner == self.owner)
                    .values(status="queued", lease_owner=None, lease_expires_at=None)
                )
        self.processed += 1
        return done

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
