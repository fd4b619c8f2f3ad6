"""How pipeline stages reach a worker: one :class:`Dispatcher` base, two implementations.

The stage code is one (:mod:`service.pipeline.runner` and :mod:`service.pipeline.stages`); only
dispatch differs:

- :class:`EmbeddedDispatcher` (the embedded default, SQLite or PostgreSQL): the run row is the
  queue; the in-process :class:`~service.pipeline.executor.Executor` leases runs and walks their
  stages.
- :class:`ProcrastinateDispatcher` (PostgreSQL with ``REGUA_QUEUE=procrastinate`` or ``auto``):
  every stage is a procrastinate job deferred in the transaction that stores what came before
  it; ``regua worker`` processes (and ``regua serve`` unless ``--no-worker``) run them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from regua.errors import ConfigurationError
from regua.settings import Settings
from service.pipeline.executor import Executor
from service.pipeline.pgqueue import GenerateArgs, defer_first, defer_next
from service.pipeline.runner import Machinery
from service.storage import Database
from service.storage.blobs import BlobStore

GenerateHandler = Callable[[str, GenerateArgs], None]
"""Runs one generation or experiment job from the queue: (kind, args)."""


class Workers(Protocol):
    """Running pipeline workers of one process."""

    def request_stop(self) -> object:
        """Stop taking work (work in progress is handed back or finishes shortly)."""
        ...

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True when every worker ended."""
        ...


@dataclass(frozen=True)
class WorkerSetup:
    """What a process's pipeline workers run on."""

    db: Database
    blobs: BlobStore
    machinery: Machinery
    threads: int
    generate: GenerateHandler | None = None
    """Runs the generate queue's jobs (a queue dispatcher; embedded jobs run on the context)."""


class Dispatcher:
    """Where accepted runs and recorded stages go next.

    The base defers nothing: the run row is the queue. A dispatcher names itself and starts its
    workers (:meth:`start_workers`).
    """

    name: str

    def __init__(self, settings: Settings) -> None:
        """Dispatch with the lane and queue settings of ``settings``."""
        self.settings = settings

    def on_submitted(self, session: Session, run_ids: Sequence[str]) -> None:
        """Queue new runs, inside the transaction that stores them.

        The base does nothing: a ``queued`` run row is claimable as soon as it commits.
        """

    def on_recorded(self, session: Session, run_id: str, stage: str) -> None:
        """Queue what follows a stage, inside the transaction that records it.

        The base does nothing: the executor walks every stage of a claimed run.
        """

    def start_workers(self, setup: WorkerSetup) -> Workers:
        """Start this process's pipeline workers (and, on a queue, its generate jobs')."""
        raise NotImplementedError


class EmbeddedDispatcher(Dispatcher):
    """The run row is the queue; the in-process executor polls it (nothing to defer)."""

    name = "embedded"

    def start_workers(self, setup: WorkerSetup) -> Executor:
        """Start the in-process executor with ``setup.threads`` threads.

        ``setup.generate`` is unused: embedded generate jobs run on the context's job runner.
        """
        executor = Executor(
            setup.db,
            setup.blobs,
            setup.machinery,
            threads=setup.threads,
            heavy_slots=self.settings.heavy_concurrency(),
        )
        executor.start()
        return executor


class ProcrastinateDispatcher(Dispatcher):
    """Each stage is a procrastinate job on the render or judge queue (PostgreSQL)."""

    name = "procrastinate"

    def on_submitted(self, session: Session, run_ids: Sequence[str]) -> None:
        """Defer each run's first stage (check) in the submission's transaction."""
        defer_first(session, run_ids)

    def on_recorded(self, session: Session, run_id: str, stage: str) -> None:
        """Defer the next stage in the transaction that records ``stage``."""
        defer_next(session, run_id, stage)

    def start_workers(self, setup: WorkerSetup) -> Workers:
        """Start procrastinate workers on a thread of this process (``setup.threads`` is unused).

        ``setup.generate`` runs the jobs of the ``generate`` queue (generations, experiments).
        """
        from service.pipeline.pgworker import StageJobs, WorkerThread, build_app

        # the queue settings size each worker
        jobs = StageJobs(setup.db, setup.blobs, setup.machinery, self.settings)
        worker = WorkerThread(build_app(jobs, self.settings, setup.generate), self.settings)
        worker.start()
        return worker


def choose_dispatcher(settings: Settings, db: Database) -> Dispatcher:
    """The dispatcher of ``REGUA_QUEUE`` (auto: procrastinate on PostgreSQL, else embedded).

    Raises:
        ConfigurationError: ``REGUA_QUEUE=procrastinate`` with a database that is not PostgreSQL.
    """
    if settings.queue == "embedded" or (settings.queue == "auto" and db.is_sqlite):
        return EmbeddedDispatcher(settings)
    if db.is_sqlite or not db.url.startswith("postgresql"):
        raise ConfigurationError(
            "REGUA_QUEUE=procrastinate needs PostgreSQL: set REGUA_DATABASE_URL="
            "postgresql+psycopg://USER@HOST/DB, or REGUA_QUEUE=embedded"
        )
    return ProcrastinateDispatcher(settings)
