"""Lanes and fairness in the embedded executor, end to end (real checks, sandboxed renders).

What a user sees: 20 animated runs queued before 20 static ones do not hold the static ones up
(every static run is finished while animated runs still wait for their render); a token that
queued 30 runs does not hold up a token that queued 3 after it (the 3 finish before most of the
30). Every assertion is on run states and order, never on durations: the state is read at the
stored moment the awaited runs finished, not when the test's poll noticed it (on a loaded machine
more work ends between the two).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.context import ServiceContext
from service.pipeline.lanes import CHEAP, HEAVY
from service.storage import Run
from tests.service.scheduling.helpers import (
    animated,
    done,
    done_by,
    lanes,
    last_finished,
    rendered_by,
    static,
    wait_for,
)


@pytest.fixture
def lane_ctx(
    tmp_path: Path, database_url: str, render_pool: WorkerPool
) -> Iterator[ServiceContext]:
    """An embedded service on two render workers: one heavy render at a time."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        queue="embedded",
        queue_capacity=200,
        render_workers=2,
    )
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    yield ctx
    ctx.close()


@pytest.mark.heavy  # tens of seconds per database: its unit is handed out first
def test_static_runs_finish_while_animated_ones_wait(lane_ctx: ServiceContext) -> None:
    heavy = lane_ctx.submit(animated(20), None)
    cheap = lane_ctx.submit(static(20), None)
    executor = lane_ctx.start_executor()  # 4 threads, 1 heavy slot
    assert executor.heavy_slots == 1
    wait_for("every static run", lambda: done(lane_ctx, cheap) == len(cheap))
    executor.request_stop()
    still_waiting = len(heavy) - rendered_by(lane_ctx, heavy, last_finished(lane_ctx, cheap))
    print(f"static runs done: {len(cheap)}; animated runs still waiting: {still_waiting}")
    assert still_waiting >= 10, f"only {still_waiting} animated runs were still waiting"
    assert lanes(lane_ctx, cheap) == {CHEAP}
    assert lanes(lane_ctx, heavy) == {HEAVY}  # every animated run was checked meanwhile
    with lane_ctx.db.read() as s:
        claims = set(s.scalars(select(Run.claims).where(Run.id.in_(heavy))))
    assert claims <= {0, 1}  # a run handed back for want of a heavy slot got its claim back


def test_a_token_with_few_runs_is_not_held_up_by_one_with_many(lane_ctx: ServiceContext) -> None:
    a = create_token(lane_ctx.db, "submitter", "many")[1].token_id
    b = create_token(lane_ctx.db, "submitter", "few")[1].token_id
    many = lane_ctx.submit(static(30, "a"), a)
    few = lane_ctx.submit(static(3, "b"), b)
    lane_ctx.start_executor(threads=2)
    wait_for("the three runs of the second token", lambda: done(lane_ctx, few) == len(few))
    first_token_done = done_by(lane_ctx, many, last_finished(lane_ctx, few))
    print(f"runs of the 30-run token done when the 3-run token finished: {first_token_done}")
    assert lane_ctx.executor is not None
    lane_ctx.executor.request_stop()
    assert first_token_done <= 10, f"{first_token_done} of 30 runs went before the 3"
