"""The per-run pipeline as a data-driven list of small, idempotent stages.

Each stage is keyed by (run, stage, version). A stage computes outside any transaction (rendering
can take seconds), then writes its artifacts, its rows and its :class:`StageRecord` in one
transaction; a crash before that commit leaves nothing behind but content-addressed blobs, so the
stage simply runs again. A finished stage is never run twice for the same version.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from regua.errors import ReguaError
from service.evaluation.evaluator import Evaluator
from service.pipeline.render_client import RenderOutput
from service.storage import Database, Run, StageAttempt, StageRecord, TaskRow
from service.storage.blobs import BlobStore
from service.storage.cached_blobs import WrittenBlobs
from service.storage.details import DetailT, StageDetail, StageStatus, read_detail, stage_status
from tasks import TaskSpec

log = logging.getLogger("regua.pipeline")

MAX_STAGE_ATTEMPTS = 3


class Renderer(Protocol):
    """The host-side render client a pipeline renders through (``RenderClient``)."""

    version: str

    def render(self, svg_text: str, task: TaskSpec) -> RenderOutput:
        """Render frames and masks; never raises for a machinery failure (``incomplete``)."""
        ...

    def close(self) -> None:
        """Release the render workers."""
        ...


class RunDoneHook(Protocol):
    """A step taken in the transaction that marks a run ``done`` (e.g. queueing its reviews)."""

    def __call__(self, session: Session, run_id: str) -> None:
        """Act on the run just finished, inside the finalize stage's transaction."""
        ...


class StageRecordedHook(Protocol):
    """A step taken in the transaction that records a stage (e.g. deferring the next stage)."""

    def __call__(self, session: Session, run_id: str, stage: str) -> None:
        """Act on the stage just recorded, inside the transaction that stores its record."""
        ...


class LeaseLostError(ReguaError):
    """The run is no longer this worker's (the service is stopping): nothing is written.

    Never counted as a failed attempt; the run goes on where it stopped under its next claim.
    """


@dataclass
class Machinery:
    """What the stages run on: the checker's version, the render client, the evaluator.

    ``on_done`` hooks run in the transaction that marks a run done (the service queues the
    run's review items there, so they exist as soon as the run is finished). ``on_recorded``
    hooks run in the transaction that records a stage (the queue defers the next stage there).
    """

    checker_version: str
    renderer: Renderer
    evaluator: Evaluator
    on_done: Sequence[RunDoneHook] = ()
    known_tasks: Callable[[], Sequence[TaskSpec]] = tuple
    """Task specs the leak check watches besides the stored ones (the service's registry)."""
    on_recorded: Sequence[StageRecordedHook] = ()


@dataclass(frozen=True)
class AskedPanel:
    """The judge panel a run's submission asked for (``id`` None: the default one)."""

    id: str | None


@dataclass
class StageContext:
    """What a stage needs: storage, machinery, the run and its frozen task."""

    db: Database
    blobs: BlobStore
    machinery: Machinery
    run_id: str
    task: TaskSpec
    asked: AskedPanel | None = None
    """The panel the submission asked for, once read (a run's ``panel_id`` never changes)."""

    def requested_panel(self) -> str | None:
        """The judge panel the run's submission asked for (None: the default one); read once."""
        if self.asked is None:
            with self.db.read() as s:
                asked = s.scalar(select(Run.panel_id).where(Run.id == self.run_id))
            self.asked = AskedPanel(asked)
        return self.asked.id

    def record(self, stage: str, session: Session | None = None) -> StageRecord | None:
        """The newest record of an earlier stage (any version); in ``session`` when given."""
        if session is None:
            with self.db.read() as s:
                return self.record(stage, s)
        return session.scalars(
            select(StageRecord)
            .where(StageRecord.run_id == self.run_id, StageRecord.stage == stage)
            .order_by(StageRecord.id.desc())
        ).first()

    def detail(
        self, stage: str, model: type[DetailT], session: Session | None = None
    ) -> tuple[StageStatus | None, DetailT]:
        """The status and typed detail of an earlier stage (``None`` when it has no record)."""
        rec = self.record(stage, session)
        return (stage_status(rec.status) if rec else None), read_detail(rec, model)


Written = tuple[StageStatus, BaseModel]
#: A stage's write step: called inside the stage's transaction; returns (status, detail).
Writer = Callable[[Session], Written]


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


class TaskCache:
    """Frozen task versions by (row id, content hash): a worker parses each one once.

    Thread-safe; bounded (cleared when full). A task row never changes once stored, and its
    content hash is part of the key, so a cached spec is always the row's.
    """

    def __init__(self, cap: int = 256) -> None:
        """Keep at most ``cap`` specs."""
        self.cap = cap
        self._specs: dict[tuple[int, str], TaskSpec] = {}
        self._lock = threading.Lock()

    def run_task(self, session: Session, run_id: str) -> RunTask | None:
        """The run's status, frozen task and asked panel (None: no such run).

        One query when the task is cached.
        """
        found = session.execute(
            select(Run.status, Run.task_pk, TaskRow.content_hash, Run.panel_id)
            .join(TaskRow, TaskRow.id == Run.task_pk)
            .where(Run.id == run_id)
        ).first()
        if found is None:
            return None
        status, key = found[0], (found[1], found[2])
        with self._lock:
            spec = self._specs.get(key)
        if spec is None:
            row = session.get(TaskRow, key[0])
            assert row is not None
            spec = TaskSpec.model_validate(row.spec)
            with self._lock:
                if len(self._specs) >= self.cap:
                    self._specs.clear()
                self._specs[key] = spec
        return RunTask(status, spec, AskedPanel(found[3]))


@dataclass(frozen=True)
class RunTask:
    """What a stage job reads about its run first (:meth:`TaskCache.run_task`)."""

    status: str
    task: TaskSpec
    asked: AskedPanel


def finished(session: Session, run_id: str, stage: str, version: str) -> bool:
    """Whether (run, stage, version) already has a record."""
    query = select(StageRecord.id).where(
        StageRecord.run_id == run_id, StageRecord.stage == stage, StageRecord.version == version
    )
    return session.scalar(query) is not None


def stage_state(s: Session, run_id: str, stage: str, version: str) -> tuple[bool, int]:
    """Whether (run, stage, version) has a record, and its failed attempts: one query."""
    recorded = (
        select(StageRecord.id)
        .where(
            StageRecord.run_id == run_id, StageRecord.stage == stage, StageRecord.version == version
        )
        .exists()
    )
    attempts = (
        select(func.count(StageAttempt.id))
        .where(
            StageAttempt.run_id == run_id,
            StageAttempt.stage == stage,
            StageAttempt.version == version,
        )
        .scalar_subquery()
    )
    found = s.execute(select(recorded, attempts)).one()
    return bool(found[0]), int(found[1] or 0)


@dataclass(frozen=True)
class Known:
    """What a caller already read about a stage (its version, and its failed attempts so far)."""

    version: str
    attempts: int


def run_stage(ctx: StageContext, stage: Stage, known: Known | None = None) -> bool:
    """Run one stage unless already finished; returns True when a record exists afterwards.

    An exception counts as a failed attempt; after :data:`MAX_STAGE_ATTEMPTS` the stage is recorded
    as ``incomplete`` with the error as its cause (machinery failure, never a fail of the work).
    ``known``: the caller has just found the stage unrecorded (in its own transaction) and
    counted its attempts, so they are not read again.
    """
    if known is None:
        version = stage.version(ctx)
        with ctx.db.read() as s:
            recorded, attempts = stage_state(s, ctx.run_id, stage.name, version)
        if recorded:
            return True
    else:
        version, attempts = known.version, known.attempts
    if attempts >= MAX_STAGE_ATTEMPTS:
        _record_given_up(ctx, stage.name, version, attempts)
        return True
    try:
        writer = stage.compute(ctx)
        with ctx.db.write() as s:
            # not looked up again: a job that recorded the stage meanwhile (a re-delivery) makes
            # this record's insert break the unique (run, stage, version), which rolls the whole
            # transaction back (see IntegrityError below)
            status, detail = writer(s)
            s.add(
                StageRecord(
                    run_id=ctx.run_id,
                    stage=stage.name,
                    version=version,
                    status=status,
                    detail=detail.model_dump(mode="json"),
                    attempts=attempts + 1,
                )
            )
            _recorded(s, ctx, stage.name)
        return True
    except LeaseLostError:
        raise  # the service is stopping: no attempt is recorded, the next claim goes on
    except Exception as exc:  # an IntegrityError too: recorded meanwhile by another job?
        with ctx.db.read() as s:
            if finished(s, ctx.run_id, stage.name, version):
                log.info("stage %s of %s was recorded concurrently", stage.name, ctx.run_id)
                return True
        return _failed_attempt(ctx, stage.name, version, exc)


def _recorded(s: Session, ctx: StageContext, stage: str) -> None:
    s.flush()
    for hook in ctx.machinery.on_recorded:
        hook(s, ctx.run_id, stage)


def _failed_attempt(ctx: StageContext, stage: str, version: str, exc: Exception) -> bool:
    log.error("stage %s of run %s failed: %s", stage, ctx.run_id, exc, exc_info=exc)
    with ctx.db.write() as s:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        s.add(StageAttempt(run_id=ctx.run_id, stage=stage, version=version, error=error))
    return False


def _record_given_up(ctx: StageContext, stage: str, version: str, attempts: int) -> None:
    with ctx.db.write() as s:
        if finished(s, ctx.run_id, stage, version):
            return
        last = s.scalars(
            select(StageAttempt.error)
            .where(StageAttempt.run_id == ctx.run_id, StageAttempt.stage == stage)
            .order_by(StageAttempt.id.desc())
        ).first()
        detail = StageDetail(cause=f"{stage}_error", error=last, attempts=attempts)
        s.add(
            StageRecord(
                run_id=ctx.run_id,
                stage=stage,
                version=version,
                status="incomplete",
                detail=detail.model_dump(mode="json"),
                attempts=attempts,
            )
        )
        _recorded(s, ctx, stage)


def advance(
    db: Database, blobs: BlobStore, machinery: Machinery, run_id: str, stages: Sequence[Stage]
) -> bool:
    """Run every unfinished stage of a run in order; True when all stages are recorded."""
    with db.read() as s:
        run = s.get(Run, run_id)
        if run is None or run.status == "done":
            return True
        task = load_task(s, run)
    # the evaluate stage reads what check and render just wrote from memory, not the store
    ctx = StageContext(db, WrittenBlobs(blobs).for_run(run_id), machinery, run_id, task)
    # stop at the first stage that could not be recorded (it is retried on the next claim)
    return all(run_stage(ctx, stage) for stage in stages)
