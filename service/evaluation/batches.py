"""The state of a re-scoring batch, kept in ``rescore_batches.summary`` as a :class:`BatchSummary`.

A batch is opened ``running`` (``runs`` to do, ``done`` 0), its progress is written while it runs
(in the transaction that appends a chunk's evaluations, at most every
:data:`PROGRESS_EVERY_S` seconds or :data:`PROGRESS_EVERY_RUNS` runs, never per run), and it
ends ``done`` with what the work did, or ``failed`` with the error (``Type: message``).
:func:`batch_view` and :func:`list_batches` are what ``GET /v1/evaluations/batches[/{id}]``
return.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select, update
from sqlalchemy.orm import Session

import judges
from regua.errors import InputError, NotFoundError
from service.storage import Database, RescoreBatch

PROGRESS_EVERY_S = 0.5
PROGRESS_EVERY_RUNS = 100

BatchState = Literal["running", "done", "failed"]


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception (what a failed job or batch records)."""
    return f"{type(exc).__name__}: {exc}"


class BatchSummary(BaseModel):
    """What a batch did, or how far it got (stored as ``rescore_batches.summary``)."""

    model_config = ConfigDict(extra="ignore")

    state: BatchState = "done"
    runs: int = 0
    """Runs the batch re-scores."""
    done: int = 0
    """Runs finished so far (appended or skipped)."""
    elapsed_s: float | None = None
    error: str | None = None
    appended: int | None = None
    """Evaluations appended (once done)."""
    rerendered: list[str] | None = None
    """Runs rendered again because their render profile changed (left out of listings)."""
    rendered_nothing: bool | None = None
    skipped: dict[str, str] | None = None
    """Runs left out, with the reason (left out of listings)."""
    judged: int | None = None
    """Distinct inputs the panel judged (identical ones are judged once)."""
    memo_hits: int | None = None
    remeasured: int | None = None
    """Runs whose mask measurements had to be measured again (and were stored)."""
    blob_reads: int | None = None


class BatchView(BatchSummary):
    """One batch as the API shows it: its summary plus what the request named."""

    batch_id: str
    task_ref: str
    panel_id: str
    created_at: str | None = None
    requested_by: int | None = None
    note: str | None = None
    status_url: str | None = None


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
    """Record the batch as ``running`` with ``runs`` to do.

    A batch opened earlier under the same id (the API opens it before the work starts) is taken
    over while it is still ``running``; a finished one is refused (a batch records one piece of
    work).
    """
    summary = BatchSummary(state="running", runs=runs).model_dump(mode="json")
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
        if BatchSummary.model_validate(row.summary or {}).state != "running":
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
        """Track ``batch_id``, which has ``runs`` to do."""
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
        summary = BatchSummary(
            state="running", runs=self.runs, done=done, elapsed_s=round(now - self.started, 3)
        )
        s.execute(
            update(RescoreBatch)
            .where(RescoreBatch.id == self.batch_id)
            .values(summary=summary.model_dump(mode="json"))
        )
        self._last_done, self._last_t = done, now
        return True


def finish_batch(db: Database, batch_id: str, summary: BatchSummary) -> None:
    """Record the batch as ``done`` with its summary."""
    with db.write() as s:
        row = s.get(RescoreBatch, batch_id)
        assert row is not None
        row.summary = summary.model_copy(update={"state": "done"}).model_dump(mode="json")


def fail_batch(
    db: Database, batch_id: str, exc: BaseException, done: int, elapsed_s: float
) -> bool:
    """Record a ``running`` batch as ``failed`` with the error.

    Returns ``False`` when there is no such running batch (a request refused before the batch
    was opened leaves no row).
    """
    with db.write() as s:
        row = s.get(RescoreBatch, batch_id)
        if row is None:
            return False
        summary = BatchSummary.model_validate(row.summary or {})
        if summary.state != "running":
            return False
        failed = summary.model_copy(
            update={
                "state": "failed",
                "done": done,
                "error": error_text(exc),
                "elapsed_s": round(elapsed_s, 3),
            }
        )
        row.summary = failed.model_dump(mode="json")
        return True


def _since(created: datetime | None) -> float:
    if created is None:
        return 0.0
    if created.tzinfo is None:  # SQLite returns naive UTC
        created = created.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - created).total_seconds())


def _view(row: RescoreBatch, job_error: str | None, full: bool) -> BatchView:
    summary = BatchSummary.model_validate(row.summary or {})
    if summary.state == "running" and job_error is not None:
        summary = summary.model_copy(update={"state": "failed", "error": job_error})
    if summary.state == "done" and summary.done == 0:
        summary = summary.model_copy(update={"done": summary.runs})
    if summary.state == "running" or summary.elapsed_s is None:
        summary = summary.model_copy(update={"elapsed_s": round(_since(row.created_at), 3)})
    if not full:
        summary = summary.model_copy(update={"rerendered": None, "skipped": None})
    return BatchView(
        **summary.model_dump(),
        batch_id=row.id,
        task_ref=row.task_ref,
        panel_id=row.panel_id,
        created_at=row.created_at.isoformat() if row.created_at else None,
        requested_by=row.requested_by,
        note=row.note,
    )


def batch_view(s: Session, batch_id: str, job_error: str | None = None) -> BatchView:
    """One batch and how far it got.

    ``state`` (running|done|failed), ``runs``, ``done``, ``elapsed_s`` (seconds since it was
    accepted while running, the work's duration once finished), the summary when done,
    ``error`` when failed. ``job_error`` is the error of the in-process job that ran it, when
    that failure could not be stored.
    """
    row = s.get(RescoreBatch, batch_id)
    if row is None:
        raise NotFoundError(f"no re-scoring batch {batch_id!r}")
    return _view(row, job_error, full=True)


def list_batches(s: Session, limit: int = 50) -> list[BatchView]:
    """The newest batches first (without their per-run lists)."""
    q = select(RescoreBatch).order_by(RescoreBatch.created_at.desc(), RescoreBatch.id.desc())
    return [_view(row, None, full=False) for row in s.scalars(q.limit(limit))]
