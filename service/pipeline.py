"""The per-run pipeline as a data-driven list of small, idempotent stages.

Each stage is keyed by (run, stage, version). A stage computes outside any transaction (rendering
can take seconds), then writes its artifacts, its rows and its :class:`StageRecord` in one
transaction; a crash before that commit leaves nothing behind but content-addressed blobs, so the
stage simply runs again. A finished stage is never run twice for the same version.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.artifacts import BlobStore
from service.components import Components
from service.db import Database, Run, StageAttempt, StageRecord, TaskRow
from tasks import TaskSpec

log = logging.getLogger("regua.pipeline")

MAX_STAGE_ATTEMPTS = 3


@dataclass
class StageContext:
    """What a stage needs: storage, machinery, the run and its frozen task."""

    db: Database
    blobs: BlobStore
    components: Components
    run_id: str
    task: TaskSpec

    def detail(self, stage: str) -> dict[str, Any] | None:
        """The stored detail of an earlier finished stage (any version), newest first."""
        with self.db.read() as s:
            rec = s.scalars(
                select(StageRecord)
                .where(StageRecord.run_id == self.run_id, StageRecord.stage == stage)
                .order_by(StageRecord.id.desc())
            ).first()
            if rec is None:
                return None
            return {"status": rec.status, **(rec.detail or {})}


#: A stage's write step: called inside the stage's transaction; returns (status, detail).
Writer = Callable[[Session], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Stage:
    """One step of the pipeline: a version function and a compute function returning a writer."""

    name: str
    version: Callable[[StageContext], str]
    compute: Callable[[StageContext], Writer]


def load_task(session: Session, run: Run) -> TaskSpec:
    """The frozen task version a run was submitted for (from the database, not the registry)."""
    row = session.get(TaskRow, run.task_pk)
    assert row is not None
    return TaskSpec.model_validate(row.spec)


def finished(session: Session, run_id: str, stage: str, version: str) -> bool:
    """Whether (run, stage, version) already has a record."""
    return (
        session.scalar(
            select(StageRecord.id).where(
                StageRecord.run_id == run_id,
                StageRecord.stage == stage,
                StageRecord.version == version,
            )
        )
        is not None
    )


def run_stage(ctx: StageContext, stage: Stage) -> bool:
    """Run one stage unless already finished; returns True when a record exists afterwards.

    An exception counts as a failed attempt; after :data:`MAX_STAGE_ATTEMPTS` the stage is recorded
    as ``incomplete`` with the error as its cause (machinery failure, never a fail of the work)."""
    version = stage.version(ctx)
    with ctx.db.read() as s:
        if finished(s, ctx.run_id, stage.name, version):
            return True
        attempts = s.scalar(
            select(func.count(StageAttempt.id)).where(
                StageAttempt.run_id == ctx.run_id,
                StageAttempt.stage == stage.name,
                StageAttempt.version == version,
            )
        )
    attempts = int(attempts or 0)
    try:
        if attempts >= MAX_STAGE_ATTEMPTS:
            raise _GiveUpError(attempts)
        writer = stage.compute(ctx)
        with ctx.db.write() as s:
            if finished(s, ctx.run_id, stage.name, version):
                return True
            status, detail = writer(s)
            s.add(
                StageRecord(
                    run_id=ctx.run_id,
                    stage=stage.name,
                    version=version,
                    status=status,
                    detail=detail,
                    attempts=attempts + 1,
                )
            )
        return True
    except IntegrityError as exc:
        with ctx.db.read() as s:
            if finished(s, ctx.run_id, stage.name, version):
                log.info("stage %s of %s was recorded concurrently", stage.name, ctx.run_id)
                return True
        return _failed_attempt(ctx, stage.name, version, exc)
    except _GiveUpError:
        _record_given_up(ctx, stage.name, version, attempts)
        return True
    except Exception as exc:
        return _failed_attempt(ctx, stage.name, version, exc)


def _failed_attempt(ctx: StageContext, stage: str, version: str, exc: Exception) -> bool:
    log.error("stage %s of run %s failed: %s", stage, ctx.run_id, exc, exc_info=exc)
    with ctx.db.write() as s:
        s.add(
            StageAttempt(
                run_id=ctx.run_id,
                stage=stage,
                version=version,
                error=f"{type(exc).__name__}: {exc}"[:2000],
            )
        )
    return False


class _GiveUpError(Exception):
    def __init__(self, attempts: int) -> None:
        self.attempts = attempts


def _record_given_up(ctx: StageContext, stage: str, version: str, attempts: int) -> None:
    with ctx.db.write() as s:
        if finished(s, ctx.run_id, stage, version):
            return
        last = s.scalars(
            select(StageAttempt.error)
            .where(StageAttempt.run_id == ctx.run_id, StageAttempt.stage == stage)
            .order_by(StageAttempt.id.desc())
        ).first()
        s.add(
            StageRecord(
                run_id=ctx.run_id,
                stage=stage,
                version=version,
                status="incomplete",
                detail={"cause": f"{stage}_error", "error": last, "attempts": attempts},
                attempts=attempts,
            )
        )


def advance(
    db: Database, blobs: BlobStore, components: Components, run_id: str, stages: list[Stage]
) -> bool:
    """Run every unfinished stage of a run in order; True when all stages are recorded."""
    with db.read() as s:
        run = s.get(Run, run_id)
        if run is None or run.status == "done":
            return True
        task = load_task(s, run)
    ctx = StageContext(db, blobs, components, run_id, task)
    # stop at the first stage that could not be recorded (it is retried on the next claim)
    return all(run_stage(ctx, stage) for stage in stages)


def dumps(data: Any) -> bytes:
    """Canonical JSON bytes for stored JSON artifacts."""
    return json.dumps(data, sort_keys=True, indent=1, default=str).encode()
