"""The service context: settings, storage, the render client, the evaluator and the executor.

One :class:`ServiceContext` per service instance (``regua serve``, ``regua worker``, a test):
every request handler, background job and CLI command that needs the service goes through it,
so there is one render pool, one gate reader and one evaluator per process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

import judges
from regua.errors import ConfigurationError, ReguaError
from regua.llm.limits import (
    LayeredLimiter,
    Limiter,
    install_limiter,
    settings_limiter,
    uninstall_limiter,
)
from regua.settings import Settings
from sandbox import WorkerPool
from service.access.secret import bind_secret, installation_secret
from service.evaluation.evaluator import Evaluator, check_panel
from service.evaluation.gate import StoredEligibility
from service.pipeline.admission import Admission, Limits
from service.pipeline.check_stage import CHECKER_VERSION
from service.pipeline.dispatch import Dispatcher, Workers, WorkerSetup, choose_dispatcher
from service.pipeline.done_watch import RunWatch, announce_done
from service.pipeline.executor import Executor, make_owner
from service.pipeline.jobs import JobFields, JobRunner
from service.pipeline.pgqueue import GenerateArgs as GenerateArgs
from service.pipeline.pgqueue import defer_generate
from service.pipeline.render_client import RenderClient
from service.pipeline.runner import Machinery
from service.pipeline.slots import FleetLimiter
from service.pipeline.submit import StoredHook, Submission, submit
from service.review.intake import queue_run
from service.review.policy import queue_policy
from service.review.queue import QueuePolicy
from service.storage import Database
from service.storage.blob_registry import open_blob_store
from service.storage.blobs import BlobStore
from service.storage.files import private_dir
from service.tasks_store import StoredTaskRegistry
from service.tasks_store.configured import families_of
from service.tasks_store.files import load_tasks_dir
from tasks import TaskRegistry, bundled_registry

SHUTDOWN_GRACE_S = 3.0
"""How long stopping waits for work in progress before leaving it to the next start."""
GENERATE_THREADS = 4
"""Generation and experiment jobs one embedded context runs at once (its generate runner)."""

GenerateWork = Callable[["ServiceContext", GenerateArgs, threading.Event], JobFields | None]
"""One kind of generate job: runs with its (JSON) args until done or until the event is set."""
GenerateCancel = Callable[["ServiceContext", GenerateArgs], None]
"""Records that a job of that kind was stopped before its end (it stays resumable)."""
_GENERATE_KINDS: dict[str, tuple[GenerateWork, GenerateCancel | None]] = {}


def register_generate_kind(
    kind: str, work: GenerateWork, on_cancel: GenerateCancel | None = None
) -> None:
    """Register a kind of generate job (``generation``, ``experiment``) by its work."""
    _GENERATE_KINDS[kind] = (work, on_cancel)


class GenerateInterruptedError(ReguaError):
    """A generate job stopped with its process before its end (the queue retries it)."""


def service_panel(settings: Settings, registry: TaskRegistry | None = None) -> str | None:
    """Register the judge files of ``REGUA_JUDGES_DIR`` and check ``REGUA_PANEL``.

    Returns the service's panel id (None: each task version's default panel). A bad judge file
    or an unknown panel stops the start with the file, field or known panels named. A panel may
    be for any family with a version in ``registry`` (bundled or added).
    """
    judges.load_configured(settings, _families(registry))
    if settings.panel is None:
        return None
    return judges.require_panel(settings.panel).id


def _families(registry: TaskRegistry | None) -> judges.FamilySource | None:
    if registry is None:
        return None
    return lambda: families_of(registry)


@dataclass
class ServiceContext:
    """Everything a request handler or worker needs."""

    settings: Settings
    db: Database
    blobs: BlobStore
    registry: TaskRegistry
    renderer: RenderClient
    gate: StoredEligibility
    evaluator: Evaluator
    executor: Executor | None = None
    jobs: JobRunner | None = None
    secret: bytes = field(default=b"", repr=False)
    """The installation secret (``service.access.secret``): keys tokens, sessions, blinding."""
    generate_jobs: JobRunner | None = None
    """The embedded runner of generation and experiment jobs (:meth:`start_generate`)."""
    stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set when the context closes: running generate jobs stop at their next call."""
    _jobs_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    admission: Admission = field(init=False, repr=False)
    """Batch size, per-token rate, queue capacity and per-submitter share (a test may replace it
    with one on its own clock)."""

    run_watch: RunWatch = field(init=False, repr=False)
    """The requests of this process waiting for runs to be done (``wait_s``), and their wake-up."""
    dispatcher: Dispatcher = field(init=False, repr=False)
    """Where runs and recorded stages go next (``REGUA_QUEUE``: embedded or procrastinate)."""
    workers: Workers | None = field(default=None, repr=False)
    """The procrastinate workers this process runs (None: none, or the embedded executor)."""
    judges_watch: judges.FolderWatch | None = field(default=None, repr=False)
    """Registers judge files added to ``REGUA_JUDGES_DIR`` while the service runs."""
    model_limiter: Limiter | None = field(default=None, repr=False)
    """The fleet-wide limiter of model calls this context installed (PostgreSQL), if any."""
    _previous_limiter: Limiter | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        """Admit submissions by the limits of the settings; choose the dispatcher."""
        self.admission = Admission(Limits.from_settings(self.settings))
        self.dispatcher = choose_dispatcher(self.settings, self.db)
        self.run_watch = RunWatch(None if self.db.is_sqlite else self.db.url)

    @classmethod
    def open(cls, settings: Settings, *, render_pool: WorkerPool | None = None) -> ServiceContext:
        """Open the data folder (``0700``), the installation secret, the database and artifacts.

        Args:
            settings: the service's settings.
            render_pool: a running pool of render workers to use (it stays the caller's);
                by default the context starts its own on the first render.
        """
        private_dir(settings.data_dir)  # 0700: the database, artifacts and secrets are inside
        secret = installation_secret(settings)
        blobs = open_blob_store(settings)  # a missing or unreachable bucket stops here
        db = Database(settings.resolved_database_url())
        bind_secret(db, secret)
        registry = StoredTaskRegistry(db, bundled_registry())
        try:
            if settings.tasks_dir is not None:
                load_tasks_dir(registry, settings.tasks_dir)  # a bad task file stops the start
            panel_id = service_panel(settings, registry)  # a bad judge file or panel stops here
        except BaseException:
            db.dispose()
            raise
        gate = StoredEligibility(db)
        evaluator = Evaluator(gate.current, settings, panel_id=panel_id)
        renderer = RenderClient(settings, render_pool)
        context = cls(settings, db, blobs, registry, renderer, gate, evaluator)
        context.judges_watch = judges.watch_configured(settings, _families(registry))
        context.secret = secret
        context._install_model_limiter()
        return context

    def _install_model_limiter(self) -> None:
        """On PostgreSQL, every model call of this process also takes a fleet-wide slot."""
        if self.db.is_sqlite:
            return
        fleet = FleetLimiter(self.db, make_owner(), self.settings.judge_fleet_limit)
        self.model_limiter = LayeredLimiter(settings_limiter(self.settings), fleet)
        self._previous_limiter = install_limiter(self.model_limiter)

    @property
    def machinery(self) -> Machinery:
        """What the pipeline's stages run on (a finished run's review items are queued then)."""
        return Machinery(
            CHECKER_VERSION,
            self.renderer,
            self.evaluator,
            on_done=(self.queue_reviews, self.announce_done),
            known_tasks=self.registry.all,
            on_recorded=(self.dispatcher.on_recorded,),
        )

    def review_policy(self) -> QueuePolicy:
        """The review queue's policy (settings, keyed by the installation secret)."""
        return queue_policy(self.settings, self.secret)

    def queue_reviews(self, session: Session, run_id: str) -> None:
        """Create a finished run's review items (in the transaction that marks it done)."""
        queue_run(session, run_id, self.review_policy())

    def announce_done(self, session: Session, run_id: str) -> None:
        """Wake the requests waiting for the run, in every process, once it is committed."""
        announce_done(session, run_id, self.run_watch)

    def start_executor(self, threads: int | None = None) -> Executor:
        """Start the in-process executor.

        By default it has two threads per render worker, so the pool stays busy while other
        threads check, judge and store; at most ``settings.heavy_concurrency()`` of them render
        heavy-lane runs at once.
        """
        self.executor = Executor(
            self.db,
            self.blobs,
            self.machinery,
            threads=threads or max(2, 2 * self.settings.render_workers),
            heavy_slots=self.settings.heavy_concurrency(),
        )
        self.executor.start()
        return self.executor

    def start_workers(self, threads: int | None = None) -> None:
        """Start this process's pipeline work with the dispatcher of the settings.

        Embedded: the in-process executor (:meth:`start_executor`); procrastinate: workers on
        the render and judge queues, on a thread of their own.
        """
        if self.dispatcher.name == "embedded":
            self.start_executor(threads)
            return
        threads = threads or max(2, 2 * self.settings.render_workers)
        self.workers = self.dispatcher.start_workers(
            WorkerSetup(self.db, self.blobs, self.machinery, threads, self.run_generate)
        )

    def start_generate(
        self,
        kind: str,
        args: GenerateArgs,
        key: str,
        *,
        store: Callable[[Session], None] | None = None,
        info: JobFields | None = None,
    ) -> str:
        """Start a generation or experiment job; its job id.

        ``store`` writes the job's rows first. Embedded: the job runs on this context's generate
        runner (:data:`GENERATE_THREADS` at once) and :meth:`close` stops it. Procrastinate: it
        is deferred on the ``generate`` queue in the transaction that runs ``store`` and any
        worker (``regua worker``, or ``regua serve``) runs it; a job whose worker died is retried
        by another one.
        """
        work, on_cancel = self._generate_kind(kind)
        embedded = self.dispatcher.name == "embedded"
        with self.db.write() as s:
            if store is not None:
                store(s)
            if not embedded:
                defer_generate(s, kind, args, key)
        if not embedded:
            return f"{kind}:{key}"

        def cancelled(_job: object) -> None:
            if on_cancel is not None:
                on_cancel(self, args)

        with self._jobs_lock:
            if self.generate_jobs is None:
                self.generate_jobs = JobRunner(threads=GENERATE_THREADS, name="regua-generate")
            runner = self.generate_jobs
        job = runner.submit(
            kind,
            lambda: work(self, args, self.stopping),
            job_id=f"{kind}:{key}",
            info=info,
            on_cancel=cancelled,
        )
        return job.id

    def run_generate(self, kind: str, args: GenerateArgs) -> None:
        """Run one job of the ``generate`` queue here (a procrastinate worker calls this).

        Raises:
            GenerateInterruptedError: the context closed before the job's end (retried).
        """
        work, _ = self._generate_kind(kind)
        work(self, args, self.stopping)
        if self.stopping.is_set():
            raise GenerateInterruptedError(f"{kind} job stopped with its worker; it is retried")

    @staticmethod
    def _generate_kind(kind: str) -> tuple[GenerateWork, GenerateCancel | None]:
        found = _GENERATE_KINDS.get(kind)
        if found is None:
            known = ", ".join(sorted(_GENERATE_KINDS)) or "none"
            raise ConfigurationError(f"no generate job kind {kind!r} (known: {known})")
        return found

    def submit(
        self,
        items: Sequence[Submission],
        token_id: int | None,
        on_stored: StoredHook | None = None,
    ) -> list[str]:
        """Store and queue submissions (all or none) and wake the executor; the run ids.

        A submission's ``panel`` must be a registered panel of its task's family (404 for an
        unknown one, 422 for another family's), checked before anything is stored.
        ``on_stored`` runs in the storing transaction (see :func:`service.pipeline.submit.submit`).
        """
        for item in items:
            if item.panel is not None:
                check_panel(item.panel, self.registry.get(item.task))
        ids = submit(
            self.db,
            self.blobs,
            items,
            token_id,
            registry=self.registry,
            admission=self.admission,
            on_stored=self._stored_hook(on_stored),
        )
        self.wake()
        return ids

    def _stored_hook(self, extra: StoredHook | None) -> StoredHook:
        """The dispatcher's hook (defer the runs' jobs), after the caller's own (if any)."""
        if extra is None:
            return self.dispatcher.on_submitted

        def both(session: Session, ids: Sequence[str]) -> None:
            extra(session, ids)
            self.dispatcher.on_submitted(session, ids)

        return both

    def wake(self) -> None:
        """Tell the executor that work arrived (no-op without one)."""
        if self.executor is not None:
            self.executor.wake()

    def job_runner(self) -> JobRunner:
        """The runner of long HTTP work (re-scoring batches, calibrations).

        It runs one job at a time on one background thread; it is created on first use and
        closed with the context.
        """
        with self._jobs_lock:
            if self.jobs is None:
                self.jobs = JobRunner()
            return self.jobs

    def close(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Shut the context down within about ``grace_s`` seconds.

        The executor stops taking work and hands the runs it holds back to the queue at once
        (a later claim resumes them from their last recorded stage); the running background job
        gets ``grace_s`` to finish; the render workers are released; the database is closed.
        """
        deadline = time.monotonic() + grace_s
        self.stopping.set()
        if self.executor is not None:
            self.executor.request_stop()
        if self.workers is not None:
            self.workers.request_stop()
        if self.jobs is not None:
            self.jobs.close(wait_s=grace_s)
        if self.generate_jobs is not None:
            self.generate_jobs.close(wait_s=max(0.0, deadline - time.monotonic()))
        # a render worker still starting or rendering holds the pool: release it on a thread
        # of its own and stop waiting at the deadline (the sandbox dies with this process)
        closer = threading.Thread(target=self.renderer.close, name="regua-close", daemon=True)
        closer.start()
        closer.join(max(0.1, deadline - time.monotonic()))
        if self.executor is not None:
            self.executor.join(max(0.1, deadline - time.monotonic()))
        if self.workers is not None:
            self.workers.join(max(0.1, deadline - time.monotonic()))
        self.run_watch.close()
        judges.unwatch(self.judges_watch)
        self.judges_watch = None
        if self.model_limiter is not None:
            uninstall_limiter(self.model_limiter, self._previous_limiter)
            self.model_limiter = None
        self.db.dispose()
