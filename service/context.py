"""The service context: settings, database, blob store, components and executor in one place."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from regua.settings import Settings
from service.artifacts import BlobStore, LocalBlobStore
from service.components import Components
from service.db import Database
from service.executor import Executor
from tasks import TaskRegistry, bundled_registry

if TYPE_CHECKING:
    from service.scoring.jobs import JobRunner


@dataclass
class ServiceContext:
    """Everything a request handler or worker needs."""

    settings: Settings
    db: Database
    blobs: BlobStore
    registry: TaskRegistry
    components_factory: Callable[[Settings], Components] | None = None
    executor: Executor | None = None
    components: Components | None = field(default=None)
    jobs: JobRunner | None = field(default=None)
    _jobs_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(
        cls,
        settings: Settings,
        components_factory: Callable[[Settings], Components] | None = None,
    ) -> ServiceContext:
        """Open the database (migrating it) and the artifact folder."""
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = Database(settings.resolved_database_url())
        blobs = LocalBlobStore(settings.resolved_artifact_dir())
        return cls(settings, db, blobs, bundled_registry(), components_factory)

    def start_executor(self, threads: int | None = None) -> Executor:
        """Build the components and start the in-process executor (default: two threads per
        render worker, so the pool stays busy while other threads check, judge and store)."""
        if self.components_factory is None:
            from service.adapters import production_components

            self.components_factory = production_components
        self.components = self.components_factory(self.settings)
        self.executor = Executor(
            self.db,
            self.blobs,
            self.components,
            threads=threads or max(2, 2 * self.settings.render_workers),
        )
        self.executor.start()
        return self.executor

    def wake(self) -> None:
        """Tell the executor that work arrived (no-op without one)."""
        if self.executor is not None:
            self.executor.wake()

    def job_runner(self) -> JobRunner:
        """The runner of long HTTP work (re-scoring batches, calibrations): one job at a time
        on one background thread, created on first use, closed with the context."""
        with self._jobs_lock:
            if self.jobs is None:
                from service.scoring.jobs import JobRunner

                self.jobs = JobRunner()
            return self.jobs

    def close(self) -> None:
        """Finish the running background job, stop the executor, release workers and close the
        database."""
        if self.jobs is not None:
            self.jobs.close()
        if self.executor is not None:
            self.executor.stop()
        if self.components is not None:
            self.components.close()
        self.db.dispose()
