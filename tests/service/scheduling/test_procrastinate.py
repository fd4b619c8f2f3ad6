"""Lanes and fairness on the procrastinate queue (PostgreSQL; skipped when it does not answer).

What is stored: a heavy run's render job waits in ``render_heavy`` (its own worker and
concurrency), a cheap one's in ``render``; the jobs of two tokens interleave by priority whatever
order they were deferred in. End to end with ``regua serve``'s workers: 20 static runs submitted
after 20 animated ones all finish while animated runs still wait, and a token's 3 runs finish
before most of another token's 30 queued ahead of them. Order and states only, never durations.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.pipeline.pgqueue import HEAVY_QUEUE, RENDER_QUEUE
from service.pipeline.pgworker import StageJobs, worker_options
from tests.helpers.pg import reset_pg_schema
from tests.service.scheduling.helpers import (
    HANG_S,
    animated,
    done,
    done_by,
    last_finished,
    rendered_by,
    static,
    wait_for,
)


def _open(tmp_path: Path, pg_url: str, pool: WorkerPool | None) -> ServiceContext:
    reset_pg_schema(pg_url)
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=pg_url,
        queue="procrastinate",
        queue_capacity=200,
        render_workers=2,
    )
    return ServiceContext.open(settings, render_pool=pool)


@pytest.fixture
def queue_ctx(tmp_path: Path, pg_url: str) -> Iterator[ServiceContext]:
    """A procrastinate service without workers (jobs stay where they are deferred)."""
    ctx = _open(tmp_path, pg_url, None)
    yield ctx
    ctx.close()


@pytest.fixture
def worker_ctx(tmp_path: Path, pg_url: str, render_pool: WorkerPool) -> Iterator[ServiceContext]:
    """A procrastinate service on two render workers (one heavy render at a time).

    Its workers are stopped and waited for (a render in progress ends first), so the queue's
    connections are closed before the next test.
    """
    ctx = _open(tmp_path, pg_url, render_pool)
    yield ctx
    if ctx.workers is not None:
        ctx.workers.request_stop()
        assert ctx.workers.join(HANG_S)
    ctx.close()


def _job_order(ctx: ServiceContext, stage: str) -> list[tuple[str, int | None]]:
    """(queue, submitter) of the waiting jobs of ``stage`` in the order workers take them."""
    with ctx.db.read() as s:
        rows = s.execute(
            text(
                "SELECT queue_name, args->>'submitter' FROM procrastinate_jobs "
                "WHERE status = 'todo' AND args->>'stage' = :stage ORDER BY priority DESC, id"
            ),
            {"stage": stage},
        ).all()
    return [(str(q), None if who is None else int(who)) for q, who in rows]


@pytest.mark.postgres
def test_two_tokens_jobs_interleave_and_heavy_renders_have_their_queue(
    queue_ctx: ServiceContext,
) -> None:
    a = create_token(queue_ctx.db, "submitter", "many")[1].token_id
    b = create_token(queue_ctx.db, "submitter", "few")[1].token_id
    ids = queue_ctx.submit(static(3, "a"), a)
    queue_ctx.submit(static(2, "b"), b)
    order = [who for _queue, who in _job_order(queue_ctx, "check")]
    assert order == [a, b, a, b, a]  # deferred a, a, a, b, b
    heavy = queue_ctx.submit(animated(1), None)
    jobs = StageJobs(queue_ctx.db, queue_ctx.blobs, queue_ctx.machinery, queue_ctx.settings)
    jobs.run(heavy[0], "check")
    jobs.run(ids[0], "check")
    # the heavy render waits on its own queue; the cheap one went on in its check job
    assert _job_order(queue_ctx, "render") == [(HEAVY_QUEUE, None)]
    assert done(queue_ctx, ids[:1]) == 1


def test_each_lane_has_its_own_worker_and_concurrency() -> None:
    settings = Settings(render_workers=3)
    options = {o["name"]: (o["queues"], o["concurrency"]) for o in worker_options(settings)}
    assert options["render"] == ([RENDER_QUEUE], 6)
    assert options["heavy"] == ([HEAVY_QUEUE], 2)  # one render worker stays free for cheap work
    only = Settings(render_workers=3, worker_lanes="heavy", queue_heavy_concurrency=3)
    assert [(o["name"], o["concurrency"]) for o in worker_options(only)] == [("heavy", 3)]
    result = CliRunner().invoke(app, ["worker", "--lanes", "render,bogus"])
    assert result.exit_code == 2 and "--lanes" in result.output


@pytest.mark.heavy  # tens of seconds: its unit is handed out first
@pytest.mark.postgres
def test_static_runs_finish_while_animated_ones_wait_on_the_queue(
    worker_ctx: ServiceContext,
) -> None:
    heavy = worker_ctx.submit(animated(20), None)
    cheap = worker_ctx.submit(static(20), None)
    worker_ctx.start_workers()
    wait_for("every static run", lambda: done(worker_ctx, cheap) == len(cheap))
    still_waiting = len(heavy) - rendered_by(worker_ctx, heavy, last_finished(worker_ctx, cheap))
    print(f"static runs done: {len(cheap)}; animated runs still waiting: {still_waiting}")
    assert still_waiting >= 10, f"only {still_waiting} animated runs were still waiting"


@pytest.mark.postgres
def test_a_token_with_few_runs_goes_first_on_the_queue(worker_ctx: ServiceContext) -> None:
    a = create_token(worker_ctx.db, "submitter", "many")[1].token_id
    b = create_token(worker_ctx.db, "submitter", "few")[1].token_id
    many = worker_ctx.submit(static(30, "a"), a)
    few = worker_ctx.submit(static(3, "b"), b)
    worker_ctx.start_workers()
    wait_for("the three runs of the second token", lambda: done(worker_ctx, few) == len(few))
    first_token_done = done_by(worker_ctx, many, last_finished(worker_ctx, few))
    print(f"runs of the 30-run token done when the 3-run token finished: {first_token_done}")
    assert first_token_done <= 10, f"{first_token_done} of 30 runs went before the 3"
