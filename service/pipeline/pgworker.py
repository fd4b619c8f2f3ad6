"""The procrastinate side of the queue: the stage job, stalled-job recovery and the worker loop.

A worker process runs three procrastinate workers on one event loop: one on the ``render`` queue
(checks and cheap renders), one on ``render_heavy`` (renders of heavy-lane runs, at most
``Settings.heavy_concurrency()`` at once, so a render worker always stays free for cheap work)
and one on ``judge`` + ``generate`` (+ the maintenance task), each with its own concurrency, so
a slow vision API never takes the slots rendering needs and an animated batch never holds up
static runs. ``REGUA_WORKER_LANES`` (``regua worker --lanes``) runs only some of them. Stage
jobs are synchronous (they run the same :func:`~service.pipeline.runner.run_stage` as the
embedded executor) and run on threads; a stage job goes on with the stages that follow it until
the kind of work changes (:mod:`.chain`), so a static run is usually one job on one worker.

Weak spots of the engine covered here (procrastinate issues #1518, #1408):

- a killed worker's jobs stay ``doing``: the periodic ``regua.maintenance`` task retries the jobs
  of workers whose heartbeat is older than ``REGUA_QUEUE_STALLED_S``, and re-defers the next stage
  of any unfinished run no job would advance (a job that failed for good);
- a PostgreSQL restart (also during that recovery) breaks the connections of the pool and ends
  the workers: pooled connections are checked before use, and the loop here starts the workers
  again until it is told to stop. A stage half-done when the database went away is simply run
  again: its record's ``(run, stage, version)`` makes the second write a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import procrastinate
import psycopg
import psycopg_pool
from procrastinate import JobContext, RetryStrategy
from procrastinate.app import WorkerOptions
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from regua.errors import ReguaError
from regua.settings import Settings
from service.pipeline.chain import Chain
from service.pipeline.done_watch import libpq_url
from service.pipeline.pgqueue import (
    GENERATE_QUEUE,
    GENERATE_TASK,
    HEAVY_QUEUE,
    JUDGE_QUEUE,
    RENDER_QUEUE,
    STAGE_TASK,
    GenerateArgs,
    defer_stage,
    orphan_runs,
)
from service.pipeline.runner import (
    Known,
    Machinery,
    Stage,
    StageContext,
    TaskCache,
    finished,
    run_stage,
    stage_state,
)
from service.pipeline.stages import STAGES
from service.storage import Database, Run, StageRecord
from service.storage.blobs import BlobStore
from service.storage.cached_blobs import WrittenBlobs
from service.storage.engine import quiet_connection

log = logging.getLogger("regua.queue")

GenerateHandler = Callable[[str, GenerateArgs], None]
"""Runs one job of the ``generate`` queue: (kind, args); raises to have it retried."""
MAINTENANCE_QUEUE = "maintenance"
MAX_GENERATE_ATTEMPTS = 20
"""A generation or experiment job interrupted (worker stopped) is retried up to this often."""
MAX_JOB_ATTEMPTS = 6
"""A stage job delivered this many times (crashes, stalls) only finalizes its run (poison pill)."""
RESTART_PAUSE_S = 1.0
POLL_S = 1.0
"""How often an idle worker looks for jobs besides procrastinate's LISTEN/NOTIFY wake-ups (a
job deferred for a retry, or one whose notification was missed, waits at most this long). Each
look is two round trips per procrastinate worker (the pool's check, the fetch); at 0.25 s the
three workers of an idle process spent about 45 ms of CPU a second on them."""


@dataclass(frozen=True)
class Ahead:
    """A stage's state read ahead (see :meth:`StageJobs.run`)."""

    version: str
    recorded: bool
    attempts: int


def _named(name: str | None) -> Stage | None:
    return next((st for st in STAGES if st.name == name), None)


class StageNotRecordedError(ReguaError):
    """A stage attempt failed without a record; procrastinate retries the job."""


class StageJobs:
    """Runs one stage of one run per job, through the shared stage code."""

    def __init__(
        self, db: Database, blobs: BlobStore, machinery: Machinery, settings: Settings
    ) -> None:
        """Run stages on ``machinery``.

        Model calls are bounded fleet-wide by the context's
        :class:`~service.pipeline.slots.FleetLimiter` (one key per model endpoint).
        """
        self.db, self.blobs, self.machinery, self.settings = db, blobs, machinery, settings
        self.written = WrittenBlobs(blobs)
        """The blobs this worker's stages just wrote, per run (evaluate reads them here)."""
        self.tasks = TaskCache()
        """The frozen task versions this worker has read (each is parsed once)."""

    def run(self, run_id: str, stage: str, delivery: int = 1) -> None:
        """Run ``stage`` of ``run_id`` unless recorded, then the stages that follow it here.

        After each record the job goes on with the next stage itself, or defers its job in the
        recording transaction where the kind of work changes (:mod:`.chain`). The stage it goes
        on with is looked up (recorded? attempts so far?) in that same transaction.

        Raises:
            StageNotRecordedError: the attempt failed (procrastinate retries the job).
        """
        with self.db.read() as s:
            found = self.tasks.run_task(s, run_id)  # status, task key, panel; specs cached
        if found is None or found.status == "done":
            return
        ahead: dict[str, Ahead] = {}
        blobs = self.written.for_run(run_id)
        ctx = StageContext(self.db, blobs, self.machinery, run_id, found.task, found.asked)
        chain = Chain(self.machinery.evaluator, found.task, ctx.requested_panel)

        def on_recorded(session: Session, run_id: str, stage: str) -> None:
            chain.on_recorded(session, run_id, stage)
            following = _named(chain.peek())
            if following is None:
                return
            try:
                version = following.version(ctx)
            except ReguaError:  # the stage itself finds out and records it, as before
                return
            # its state now, not in a transaction of its own
            state = stage_state(session, run_id, following.name, version)
            ahead[following.name] = Ahead(version, *state)

        ctx.machinery = replace(self.machinery, on_recorded=(on_recorded,))
        chosen = _named(stage)
        assert chosen is not None
        if delivery > MAX_JOB_ATTEMPTS:  # delivered again and again: only close the run
            self._abandon(run_id, stage, delivery)
            chosen = STAGES[-1]
        following: Stage | None = chosen
        first = True
        while following is not None:
            name = self._stage(ctx, following, chain, first, ahead.pop(following.name, None))
            following = _named(name)
            first = False

    def _stage(
        self, ctx: StageContext, chosen: Stage, chain: Chain, first: bool, ahead: Ahead | None
    ) -> str | None:
        """Run one stage unless recorded; the name of the stage this job goes on with.

        ``ahead``: the stage's state read in the transaction that recorded the stage before it.
        """
        version = chosen.version(ctx)
        if ahead is not None and ahead.version == version and not ahead.recorded and not first:
            attempts = ahead.attempts
        else:
            with self.db.write() as s:  # one transaction: recorded?, attempts so far, running
                recorded, attempts = stage_state(s, ctx.run_id, chosen.name, version)
                if recorded:  # a re-delivered job: go on from where the run stands
                    chain.on_recorded(s, ctx.run_id, chosen.name)
                    return chain.take()
                if first:
                    s.execute(
                        update(Run)
                        .where(Run.id == ctx.run_id, Run.status == "queued")
                        .values(status="running")
                    )
        known = Known(version, attempts)
        recorded = run_stage(ctx, chosen, known)  # model calls take fleet slots (FleetLimiter)
        if chosen.name == STAGES[-1].name:
            self.written.forget(ctx.run_id)
        if not recorded:
            raise StageNotRecordedError(f"stage {chosen.name} of run {ctx.run_id} is retried")
        return chain.take()

    def _abandon(self, run_id: str, stage: str, delivery: int) -> None:
        with self.db.write() as s:
            if not finished(s, run_id, "abandon", "1"):
                cause = f"abandoned: the {stage} job was delivered {delivery} times"
                s.add(
                    StageRecord(
                        run_id=run_id,
                        stage="abandon",
                        version="1",
                        status="incomplete",
                        detail={"cause": cause},
                    )
                )

    def requeue_orphans(self) -> int:
        """Defer the first unrecorded stage of runs no job advances; returns the count."""
        with self.db.write() as s:
            ids = orphan_runs(s)
            for run_id in ids:
                done = set(s.scalars(select(StageRecord.stage).where(StageRecord.run_id == run_id)))
                stage = next((st.name for st in STAGES if st.name not in done), STAGES[-1].name)
                defer_stage(s, run_id, stage)
        return len(ids)


def checked_pool(**kwargs: Any) -> psycopg_pool.AsyncConnectionPool:
    """The queue's connection pool, its check before use replaced by :func:`_check`."""
    return psycopg_pool.AsyncConnectionPool(**{**kwargs, "check": _check})


async def _check(conn: psycopg.AsyncConnection[Any]) -> None:
    """Check a pooled connection with a round trip only when its socket is not quiet.

    procrastinate checks every connection it takes from its pool (a fetch, a finish, a
    heartbeat: about five round trips per job); an idle connection with nothing to read is as
    alive as the check could tell (a restarted server leaves the socket readable).
    """
    if not quiet_connection(conn):
        await psycopg_pool.AsyncConnectionPool.check_connection(conn)


def build_app(
    jobs: StageJobs, settings: Settings, generate: GenerateHandler | None = None
) -> procrastinate.App:
    """The procrastinate app of a worker: the stage task and the periodic maintenance task.

    With ``generate``, also the task of generation and experiment jobs (``generate`` queue).
    """
    connector = procrastinate.PsycopgConnector(
        conninfo=libpq_url(jobs.db.url),
        min_size=1,
        max_size=4,
        pool_factory=checked_pool,
    )
    app = procrastinate.App(connector=connector)

    @app.task(
        name=STAGE_TASK,
        pass_context=True,
        retry=RetryStrategy(max_attempts=MAX_JOB_ATTEMPTS - 1, wait=1),
    )
    def stage_job(
        context: JobContext, run_id: str, stage: str, submitter: int | None = None
    ) -> None:
        del submitter  # only the queue's fairness reads it
        jobs.run(run_id, stage, delivery=(context.job.attempts or 0) + 1)

    period = max(1, int(settings.queue_stalled_s // 3))

    @app.periodic(cron=f"* * * * * */{period}", periodic_id="maintenance")
    @app.task(
        name="regua.maintenance",
        queue=MAINTENANCE_QUEUE,
        queueing_lock="maintenance",
        priority=100,  # ahead of every stage job: recovery never waits behind slow judges
    )
    async def maintenance(timestamp: int) -> None:
        del timestamp  # procrastinate passes the schedule's time; recovery looks at now
        await recover(app, jobs, settings.queue_stalled_s)

    if generate is not None:
        run_generate = generate

        @app.task(
            name=GENERATE_TASK,
            queue=GENERATE_QUEUE,
            retry=RetryStrategy(max_attempts=MAX_GENERATE_ATTEMPTS, wait=1),
        )
        def generate_job(kind: str, args: GenerateArgs) -> None:
            run_generate(kind, args)

        del generate_job
    del stage_job, maintenance
    return app


async def recover(app: procrastinate.App, jobs: StageJobs, stalled_s: float) -> int:
    """Retry the ``doing`` jobs of workers silent for ``stalled_s``; requeue orphaned runs.

    Returns how many jobs and runs were put back. Safe to run again after it was cut off
    (a database restart midway): each step is idempotent.
    """
    stalled = list(await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_s))
    for job in stalled:
        log.warning("retrying stalled job %s (%s)", job.id, job.call_string)
        await app.job_manager.retry_job(job)
    orphans = await asyncio.to_thread(jobs.requeue_orphans)
    return len(stalled) + orphans


def worker_options(settings: Settings) -> list[WorkerOptions]:
    """Keyword arguments of the procrastinate workers of one process.

    Those named in ``settings.worker_lanes``: ``render``, ``heavy`` and ``judge``.
    """
    render = settings.queue_render_concurrency or max(2, 2 * settings.render_workers)
    split = [
        ("render", [RENDER_QUEUE], render),
        ("heavy", [HEAVY_QUEUE], settings.heavy_concurrency()),
        (
            "judge",
            [JUDGE_QUEUE, GENERATE_QUEUE, MAINTENANCE_QUEUE],
            settings.queue_judge_concurrency,
        ),
    ]
    return [
        WorkerOptions(
            name=name,
            queues=queues,
            concurrency=concurrency,
            install_signal_handlers=False,
            update_heartbeat_interval=max(0.5, settings.queue_stalled_s / 4),
            stalled_worker_timeout=settings.queue_stalled_s,
            fetch_job_polling_interval=POLL_S,
            shutdown_graceful_timeout=3.0,
            delete_jobs="never",
        )
        for name, queues, concurrency in split
        if name in settings.worker_lanes
    ]


async def supervise(app: procrastinate.App, settings: Settings, stop: asyncio.Event) -> None:
    """Run the workers until ``stop`` is set, starting them again whenever they end or fail."""
    while not stop.is_set():
        try:
            async with app.open_async():
                workers = [
                    asyncio.create_task(app.run_worker_async(**options))
                    for options in worker_options(settings)
                ]
                stopper = asyncio.create_task(stop.wait())
                await asyncio.wait([*workers, stopper], return_when=asyncio.FIRST_COMPLETED)
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                stopper.cancel()
        except Exception:
            log.exception("the queue workers stopped; starting them again")
        if not stop.is_set():
            await asyncio.sleep(RESTART_PAUSE_S)


class WorkerThread:
    """The workers of :func:`supervise` on a thread of their own (``regua serve``)."""

    def __init__(self, app: procrastinate.App, settings: Settings) -> None:
        """Prepare (not start) the workers of ``app``."""
        self.app, self.settings = app, settings
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._run, name="regua-queue", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(supervise(self.app, self.settings, self._stop))

    def start(self) -> None:
        """Start the workers."""
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the workers to stop (running jobs get a few seconds)."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True when the workers ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
