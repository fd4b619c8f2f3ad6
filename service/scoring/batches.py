"""The state of a re-scoring batch, kept in ``rescore_batches.summary``.

A batch is opened ``running`` (``runs`` to do, ``done`` 0), its progress is written while it runs
(in the transaction that appends a chunk's evaluations, at most every
:data:`PROGRESS_EVERY_S` seconds or :data:`PROGRESS_EVERY_RUNS` runs, never per run), and it
ends ``done`` with :meth:`RescoreResult.to_dict` (without the per-run list) or ``failed`` with
the error (``Type: message``). :func:`batch_view` and :func:`list_batches` are what
``GET /v1/evaluations/batches[/{id}]`` return.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

import judges
from regua.errors import InputError, NotFoundError
from service.db import Database
from service.scoring.jobs import Job, error_text
from service.scoring.models import RescoreBatch

PROGRESS_EVERY_S = 0.5
PROGRESS_EVERY_RUNS = 100
#: Summary keys that list runs (left out of :func:`list_batches`).
_PER_RUN = ("rerendered", "skipped", "evaluations")


def new_batch_id() -> str:
    """A fresh batch id (``rs_`` + 16 hex digits)."""
    return f"rs_{uuid.uuid4().hex[:16]}"


def open_batch(
    db: Database,
    batch_id: str,
    *,
    task_ref: str,
    panel: judges.JudgePanel,
    runs: int,
    requested_by: int | None = None,
    note: str | None = None,
) -> None:
    """Record the batch as ``running`` with ``runs`` to do. A batch opened earlier under the
    same id (the API opens it before the work starts) is taken over while it is still
    ``running``; a finished one is refused (a batch records one piece of work)."""
    summary = {"state": "running", "runs": runs, "done": 0}
    with db.write() as s:
        row = s.get(RescoreBatch, batch_id)
        if row is None:
            s.add(
                RescoreBatch(
                    id=batch_id,
                    task_ref=task_ref,
                    panel_id=panel.id,
                    panel=panel.to_dict(),
                    requested_by=requested_by,
                    summary=summary,
                    note=note,
                )
            )
            return
        if (row.summary or {}).get("state") != "running":
            raise InputError(f"re-scoring batch {batch_id} has already run")
        row.task_ref, row.panel_id, row.panel = task_ref, panel.id, panel.to_dict()
        row.summary = summary


class BatchProgress:
    """Writes a running batch's progress, throttled (see the module docstring)."""

    def __init__(
        self,
        batch_id: str,
        runs: int,
        *,
        every_s: float = PROGRESS_EVERY_S,
        every_runs: int = PROGRESS_EVERY_RUNS,
    ) -> None:
        self.batch_id, self.runs = batch_id, runs
        self.every_s, self.every_runs = every_s, every_runs
        self.started = self._last_t = time.perf_counter()
        self._last_done = 0

    def elapsed_s(self) -> float:
        """Seconds since the work began."""
        return time.perf_counter() - self.started

    def write_if_due(self, s: Session, done: int) -> bool:
        """Store ``done`` in the batch summary (in ``s``'s transaction) when due."""
        now = time.perf_counter()
        if done - self._last_done < self.every_runs and now - self._last_t < self.every_s:
            return False
        summary = {"state": "running", "runs": self.runs, "done": done,
                   "elapsed_s": round(now - self.started, 3)}  # fmt: skip
        s.execute(
            update(RescoreBatch).where(RescoreBatch.id == self.batch_id).values(summary=summary)
        )
        self._last_done, self._last_t = done, now
        return True


def finish_batch(db: Database, batch_id: str, summary: dict[str, Any]) -> None:
    """Record the batch as ``done`` with its summary."""
    with db.write() as s:
        row = s.get(RescoreBatch, batch_id)
        assert row is not None
        row.summary = {"state": "done", **summary}


def fail_batch(
    db: Database, batch_id: str, exc: BaseException, done: int, elapsed_s: float
) -> bool:
    """Record a ``running`` batch as ``failed`` with the error; ``False`` when there is no such
    running batch (a request refused before the batch was opened leaves no row)."""
    with db.write() as s:
        row = s.get(RescoreBatch, batch_id)
        summary = dict(row.summary or {}) if row is not None else {}
        if row is None or summary.get("state") != "running":
            return False
        summary.update(state="failed", done=done, error=error_text(exc))
        summary["elapsed_s"] = round(elapsed_s, 3)
        row.summary = summary
        return True


def _since(created: datetime | None) -> float:
    if created is None:
        return 0.0
    if created.tzinfo is None:  # SQLite returns naive UTC
        created = created.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - created).total_seconds())


def _view(row: RescoreBatch, job: Job | None, full: bool) -> dict[str, Any]:
    summary = dict(row.summary or {})
    state = str(summary.pop("state", "done"))
    if state == "running" and job is not None and job.state == "failed":
        state, summary["error"] = "failed", job.error  # the failure could not be stored
    runs = int(summary.pop("runs", summary.get("appended", 0)))
    done = int(summary.pop("done", runs if state == "done" else 0))
    elapsed = summary.pop("elapsed_s", None)
    if state == "running" or elapsed is None:
        elapsed = round(_since(row.created_at), 3)
    out: dict[str, Any] = {
        "batch_id": row.id,
        "state": state,
        "task_ref": row.task_ref,
        "panel_id": row.panel_id,
        "runs": runs,
        "done": done,
        "elapsed_s": elapsed,
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "requested_by": row.requested_by,
        "note": row.note,
    }
    for key, value in summary.items():
        if full or key not in _PER_RUN:
            out.setdefault(key, value)
    return out


def batch_view(s: Session, batch_id: str, job: Job | None = None) -> dict[str, Any]:
    """One batch: ``state`` (running|done|failed), ``runs``, ``done``, ``elapsed_s`` (seconds
    since it was accepted while running, the work's duration once finished), the summary when
    done, ``error`` when failed. ``job`` is the in-process job that runs it (if any)."""
    row = s.get(RescoreBatch, batch_id)
    if row is None:
        raise NotFoundError(f"no re-scoring batch {batch_id!r}")
    return _view(row, job, full=True)


def list_batches(s: Session, limit: int = 50) -> list[dict[str, Any]]:
    """The newest batches first (without their per-run lists)."""
    q = select(RescoreBatch).order_by(RescoreBatch.created_at.desc(), RescoreBatch.id.desc())
    return [_view(row, None, full=False) for row in s.scalars(q.limit(limit))]
