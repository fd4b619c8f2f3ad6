"""Review items are made as runs finish; ``/v1/reviews/next`` only reads (issue 14, item 14).

Before: the first ``/next`` after 750 runs created 4,541 items in one transaction (5.8 s) and
held the SQLite writer lock, so submissions queued behind reviewers. Now the finalize stage
queues a run's items in the transaction that marks it done, and ``/next`` picks from ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event, func, select

from regua.settings import Settings
from service.pipeline.submit import Submission
from service.review.intake import CATCH_UP_LIMIT, queue_run
from service.storage import CriterionOutcomeRow, Run
from service.storage.blobs import LocalBlobStore
from service.storage.review_models import ReviewItem, ReviewScan
from tests.helpers.review_runs import add_run
from tests.service.conftest import GOOD, Api

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


WRITES = ("INSERT", "UPDATE", "DELETE")
TASK_STRUCTURED = "pelican-bicycle-structured@1"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Every automatic pass audited, so every finished run raises items."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        queue_capacity=8,
        render_workers=2,
        review_audit_rate=1.0,
    )


@contextmanager
def statements(api: Api) -> Iterator[list[str]]:
    """The SQL statements the service's engine runs inside the block (any thread)."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, sql: str, *_rest: object) -> None:
        seen.append(" ".join(sql.split()))

    engine = api.ctx.db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def count_items(api: Api) -> int:
    """Review items stored."""
    with api.ctx.db.read() as s:
        return int(s.scalar(select(func.count()).select_from(ReviewItem)) or 0)


def next_item(api: Api) -> dict[str, object]:
    """A reviewer's ``GET /v1/reviews/next`` (200)."""
    resp = api.client.get("/v1/reviews/next", headers=api.h("reviewer"))
    assert resp.status_code == 200, resp.text
    body: dict[str, object] = resp.json()
    return body


@pytest.mark.browser
@pytest.mark.sandbox
def test_items_exist_as_soon_as_a_real_run_finishes(api: Api) -> None:
    """A run through the real pipeline has its items when it is done, before any ``/next``."""
    (run_id,) = api.ctx.submit([Submission(TASK_STRUCTURED, "m", GOOD)], None)
    assert count_items(api) == 0
    api.drain()
    with api.ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.status == "done"
        items = s.scalars(select(ReviewItem).where(ReviewItem.run_id == run_id)).all()
        scan = s.get(ReviewScan, run.current_evaluation_id)
        necessary = s.scalars(
            select(CriterionOutcomeRow.criterion).where(
                CriterionOutcomeRow.evaluation_id == run.current_evaluation_id,
                CriterionOutcomeRow.kind == "necessary",
                CriterionOutcomeRow.status == "uncertain",
            )
        ).all()
    assert items, "the finished run raised no review item"
    assert scan is not None and scan.items == len(items)  # recorded as scanned, in the same step
    if run.outcome == "pending":  # every criterion the jury left uncertain waits for a person
        assert set(necessary) <= {i.criterion for i in items if i.kind == "uncertain"}
    with statements(api) as sql:
        body = next_item(api)
    item = body["item"]
    assert isinstance(item, dict) and item["item_id"] in {i.id for i in items}
    assert body["progress"] == {"done": 0, "left": len(items)}
    assert count_items(api) == len(items)  # /next created nothing
    assert not [q for q in sql if q.startswith(WRITES)], sql


def _seed(api: Api, first: int, n: int, *, queued: bool) -> None:
    """``n`` finished runs with two uncertain criteria each; ``queued`` as finalize does."""
    policy = api.ctx.review_policy()
    blobs = api.ctx.blobs
    assert isinstance(blobs, LocalBlobStore)
    for i in range(first, first + n):
        add_run(
            api.ctx.db,
            blobs,
            f"run{i:04d}",
            {"R1": "uncertain", "R2": "uncertain"},
            outcome="pending",
        )
        if queued:
            with api.ctx.db.write() as s:
                queue_run(s, f"run{i:04d}", policy)


def test_next_reads_only_and_its_work_does_not_grow_with_the_queue(api: Api) -> None:
    """``/next`` writes nothing and reads a bounded number of rows at 3 runs' items as at 40."""
    _seed(api, 0, 3, queued=True)
    per_run = count_items(api) // 3  # two uncertain items and the audited passes
    assert per_run >= 2 and count_items(api) == 3 * per_run
    with statements(api) as small:
        first = next_item(api)
    _seed(api, 3, 37, queued=True)
    assert count_items(api) == 40 * per_run
    with statements(api) as large:
        second = next_item(api)
    assert count_items(api) == 40 * per_run
    assert first["progress"] == {"done": 0, "left": 3 * per_run}
    assert second["progress"] == {"done": 0, "left": 40 * per_run}
    assert not [q for q in small + large if q.startswith(WRITES)], small + large
    # the pick walks the id index: one more hex digit at most for 13 times the items
    assert len(large) <= len(small) + 16, (small, large)
    assert not unbounded_item_reads(small + large)


def unbounded_item_reads(sql: list[str]) -> list[str]:
    """Reads of ``review_items`` that could return every row (no LIMIT, no id, no count)."""
    return [
        q
        for q in sql
        if "FROM review_items" in q
        and "LIMIT" not in q
        and "count(" not in q
        and not re.search(r"WHERE review_items\.id = (\?|%\(pk_1\)s)", q)
    ]


def test_unscanned_evaluations_are_queued_a_bounded_step_per_next(api: Api) -> None:
    """Runs finished before items were made at finish (or re-scored) are queued a few at a time."""
    n = CATCH_UP_LIMIT + 5
    _seed(api, 0, n, queued=False)  # stored without the finalize step: nobody queued them
    assert count_items(api) == 0

    def scans() -> int:
        with api.ctx.db.read() as s:
            return int(s.scalar(select(func.count()).select_from(ReviewScan)) or 0)

    body = next_item(api)
    per_run = count_items(api) // CATCH_UP_LIMIT
    assert scans() == CATCH_UP_LIMIT and count_items(api) == CATCH_UP_LIMIT * per_run
    assert body["progress"] == {"done": 0, "left": CATCH_UP_LIMIT * per_run}
    next_item(api)
    assert scans() == n and count_items(api) == n * per_run
    with statements(api) as sql:
        next_item(api)
    assert not [q for q in sql if q.startswith(WRITES)] and count_items(api) == n * per_run
