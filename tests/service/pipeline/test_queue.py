"""The procrastinate dispatcher on a real PostgreSQL database (no rendering needed here).

What is stored: a run's first job commits with the run (and a rolled-back transaction leaves no
job); a re-delivered stage job records nothing twice and defers its successor once; the jobs of a
worker whose heartbeat stopped are put back to ``todo``; a run left without any job gets one;
the fleet-wide slot table never hands out more than its limit. On SQLite nothing of this exists.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from regua.errors import ConfigurationError
from regua.settings import Settings
from service.context import ServiceContext
from service.pipeline.pgqueue import defer_stage, job_counts
from service.pipeline.pgworker import StageJobs, build_app, recover
from service.pipeline.slots import FleetSlots, SlotBusyError
from service.pipeline.submit import Submission
from service.storage import StageRecord
from tests.helpers.pg import fresh_pg_database
from tests.helpers.runs import TASK
from tests.service.conftest import GOOD
from tests.service.scheduling.helpers import animated


@pytest.fixture
def pg_ctx(tmp_path: Path) -> Iterator[ServiceContext]:
    for url in fresh_pg_database("regua_queue"):
        settings = Settings(data_dir=tmp_path / "data", database_url=url, queue_stalled_s=2)
        ctx = ServiceContext.open(settings)
        try:
            yield ctx
        finally:
            ctx.close()


def _jobs(ctx: ServiceContext, stage: str) -> list[tuple[str, str, int]]:
    with ctx.db.read() as s:
        rows = s.execute(
            text(
                "SELECT status::text, queue_name, attempts FROM procrastinate_jobs "
                "WHERE args->>'stage' = :stage ORDER BY id"
            ),
            {"stage": stage},
        ).all()
    return [(str(a), str(b), int(c)) for a, b, c in rows]


def test_sqlite_keeps_the_embedded_executor_and_no_queue_tables(tmp_path: Path) -> None:
    ctx = ServiceContext.open(Settings(data_dir=tmp_path / "data"))
    try:
        assert ctx.dispatcher.name == "embedded"
        assert not [t for t in ctx.db.table_names() if t.startswith(("procrastinate", "regua_"))]
    finally:
        ctx.close()
    settings = Settings(data_dir=tmp_path / "other", queue="procrastinate")
    with pytest.raises(ConfigurationError, match=r"needs PostgreSQL.*REGUA_QUEUE=embedded"):
        ServiceContext.open(settings)


@pytest.mark.postgres
def test_a_run_and_its_first_job_commit_together(pg_ctx: ServiceContext) -> None:
    assert pg_ctx.dispatcher.name == "procrastinate"
    ids = pg_ctx.submit([Submission(TASK, "m", GOOD + " " * i) for i in range(2)], None)
    assert _jobs(pg_ctx, "check") == [("todo", "render", 0)] * 2
    with pytest.raises(RuntimeError), pg_ctx.db.write() as s:
        assert defer_stage(s, ids[0], "render")
        raise RuntimeError("the stage's transaction fails after deferring")
    assert _jobs(pg_ctx, "render") == []  # the job went with the transaction


@pytest.mark.postgres
def test_a_redelivered_stage_job_is_a_no_op(pg_ctx: ServiceContext) -> None:
    # an animated run: its render is the heavy lane's, a job the check job defers
    (run_id,) = pg_ctx.submit(animated(1), None)
    jobs = StageJobs(pg_ctx.db, pg_ctx.blobs, pg_ctx.machinery, pg_ctx.settings)
    jobs.run(run_id, "check")
    jobs.run(run_id, "check", delivery=2)  # procrastinate delivered the job again
    with pg_ctx.db.read() as s:
        records = s.scalar(select(func.count(StageRecord.id)).where(StageRecord.stage == "check"))
    assert records == 1
    assert _jobs(pg_ctx, "render") == [("todo", "render_heavy", 0)]  # one successor, not two


@pytest.mark.postgres
def test_jobs_of_a_silent_worker_are_retried_and_orphans_requeued(pg_ctx: ServiceContext) -> None:
    a, b, c = pg_ctx.submit([Submission(TASK, "m", GOOD + " " * i) for i in range(3)], None)
    with pg_ctx.db.write() as s:
        dead = s.scalar(
            text(
                "INSERT INTO procrastinate_workers (last_heartbeat) "
                "VALUES (now() - interval '1 hour') RETURNING id"
            )
        )
        alive = s.scalar(text("INSERT INTO procrastinate_workers DEFAULT VALUES RETURNING id"))
        for run_id, worker in ((a, dead), (b, alive)):
            s.execute(
                text(
                    "UPDATE procrastinate_jobs SET status = 'doing', worker_id = :w "
                    "WHERE args->>'run_id' = :r"
                ),
                {"w": worker, "r": run_id},
            )
        s.execute(  # c's job failed for good: no job would ever advance c
            text("UPDATE procrastinate_jobs SET status = 'failed' WHERE args->>'run_id' = :r"),
            {"r": c},
        )
    jobs = StageJobs(pg_ctx.db, pg_ctx.blobs, pg_ctx.machinery, pg_ctx.settings)
    app = build_app(jobs, pg_ctx.settings)

    async def go() -> int:
        async with app.open_async():
            return await recover(app, jobs, pg_ctx.settings.queue_stalled_s)

    assert asyncio.run(go()) == 2  # a's stalled job and c's missing one
    statuses = {run_id: _status_of(pg_ctx, run_id) for run_id in (a, b, c)}
    assert statuses == {a: ["todo"], b: ["doing"], c: ["failed", "todo"]}
    with pg_ctx.db.read() as s:
        assert job_counts(s) == {"todo": 2, "doing": 1, "failed": 1}


def _status_of(ctx: ServiceContext, run_id: str) -> list[str]:
    with ctx.db.read() as s:
        rows = s.scalars(
            text(
                "SELECT status::text FROM procrastinate_jobs WHERE args->>'run_id' = :r ORDER BY id"
            ),
            {"r": run_id},
        )
        return [str(x) for x in rows]


@pytest.mark.postgres
def test_fleet_slots_hold_the_limit_across_holders(pg_ctx: ServiceContext) -> None:
    one, two = FleetSlots(pg_ctx.db, "w1"), FleetSlots(pg_ctx.db, "w2")
    assert one.try_take("judge:v@1", 2) == 0
    assert two.try_take("judge:v@1", 2) == 1
    assert one.try_take("judge:v@1", 2) is None  # the limit is the fleet's, not the process's
    assert one.in_flight("judge:v@1") == 2
    busy = pytest.raises(SlotBusyError, match=r"all 2 slots of judge:v@1")
    with busy, one.hold(["judge:v@1"], 2, wait_s=0.1):
        pass
    one.give("judge:v@1", 0)
    with two.hold(["judge:v@1"], 2):
        assert two.in_flight("judge:v@1") == 2
    assert two.in_flight("judge:v@1") == 1


@pytest.mark.postgres
def test_a_dead_holders_slot_frees_itself_when_its_lease_ends(pg_ctx: ServiceContext) -> None:
    dying, alive = FleetSlots(pg_ctx.db, "w3", ttl_s=0.3), FleetSlots(pg_ctx.db, "w4")
    assert dying.try_take("judge:e@1", 1) == 0
    time.sleep(0.4)  # w3 died holding its slot: the lease runs out (a lower bound, load-proof)
    assert alive.try_take("judge:e@1", 1) == 0
    assert alive.in_flight("judge:e@1") == 1


@pytest.mark.postgres
def test_the_queue_migration_goes_down_and_up_on_postgres(pg_ctx: ServiceContext) -> None:
    from alembic import command

    from service.storage.engine import migrations_config, upgrade

    def queue_tables() -> list[str]:
        return [t for t in pg_ctx.db.table_names() if t.startswith(("procrastinate", "regua_"))]

    assert queue_tables() == [
        "procrastinate_events",
        "procrastinate_jobs",
        "procrastinate_periodic_defers",
        "procrastinate_workers",
        "regua_slots",
    ]
    with pg_ctx.db.engine.begin() as conn:
        cfg = migrations_config(pg_ctx.db.engine)
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0510_gate_status")
    assert queue_tables() == []
    upgrade(pg_ctx.db.engine)
    assert len(queue_tables()) == 5
