"""Crash test: 50 runs, ``kill -9`` of the server while runs are in flight, restart; every run
reaches an outcome, none is lost or duplicated.

Each server has one render worker (``Served``'s default) and two executor threads, so two runs
are claimed at once (while one renders, the other is checked, judged, stored or waits for the
render worker). A second render worker per server proved nothing more (the claims, leases and
recovery under test are the executor's, not the pool's) and cost a sandboxed worker's start
(~2.5 CPU s) per server.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from service.storage import Artifact, Database, Evaluation, Run, StageRecord
from tests.helpers.pg import reset_pg_schema
from tests.helpers.server import Served, require_real_rendering

# the static task renders one frame and no masks: many real renders in a modest test time
TASK = "pelican-bicycle-static@1"
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "outputs"
N = 50
pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]


def test_kill9_mid_render_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """SQLite (embedded default) with the real sandboxed renderer."""
    require_real_rendering()
    _crash_and_recover(tmp_path, None)


@pytest.mark.postgres
@pytest.mark.xdist_group("crash-postgres")  # apart from the SQLite one: minutes each
def test_kill9_on_postgres(tmp_path: Path, pg_url: str) -> None:
    """PostgreSQL as the system of record (SKIP LOCKED claims, lease recovery)."""
    require_real_rendering()
    reset_pg_schema(pg_url)
    _crash_and_recover(tmp_path, pg_url)


def _crash_and_recover(tmp_path: Path, db_url: str | None) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = {"REGUA_DATABASE_URL": db_url} if db_url else {}
    good = (SAMPLES / "structured-good.svg").read_text()
    first = Served(data, **env)
    try:
        client = first.client()
        runs = [
            {"task": TASK, "model": {"label": f"m{i % 3}"}, "output": good + f"<!-- {i} -->"}
            for i in range(N)
        ]
        ids = client.submit_batch(runs[:25]) + client.submit_batch(runs[25:])
        db = Database(db_url or f"sqlite:///{data / 'regua.sqlite3'}", migrate=False)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until renders are in flight
            with db.read() as s:
                running = s.scalar(select(func.count()).where(Run.status == "running")) or 0
                done = s.scalar(select(func.count()).where(Run.status == "done")) or 0
                rendered = s.scalar(select(func.count()).where(StageRecord.stage == "render")) or 0
            if running and rendered >= 2 and 5 <= done < N - 5:
                break
            time.sleep(0.05)
        client.close()
        first.kill9()
    finally:
        first.stop()
    assert running and done < N, "the kill did not happen mid-way"
    print(f"killed -9 with {done} done, {running} running, {rendered} renders recorded")
    with db.read() as s:
        unfinished = s.scalar(select(func.count()).where(Run.status != "done"))
    assert unfinished and unfinished > 0

    second = Served(data, **env)
    try:
        client = second.client()
        views = client.wait(ids, timeout_s=300)
        client.close()
    finally:
        second.stop()
    assert set(views) == set(ids)
    assert all(
        v["outcome"]["status"] in {"pass", "fail", "pending", "incomplete"} for v in views.values()
    )
    with db.read() as s:
        assert s.scalar(select(func.count(Run.id))) == N
        per_run = Counter(s.scalars(select(Evaluation.run_id)))
        assert set(per_run.values()) == {1}, "an evaluation was duplicated"
        stage_keys = s.execute(
            select(StageRecord.run_id, StageRecord.stage, StageRecord.version)
        ).all()
        assert len(stage_keys) == len(set(stage_keys)) == N * 4
        keys = s.execute(
            select(Artifact.run_id, Artifact.kind, Artifact.name, Artifact.sha256)
        ).all()
        assert len(keys) == len(set(keys))
        raws = Counter(s.scalars(select(Artifact.run_id).where(Artifact.kind == "raw")))
        assert len(raws) == N and set(raws.values()) == {1}
    db.dispose()
