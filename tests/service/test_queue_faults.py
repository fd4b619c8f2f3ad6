"""Fault tests of the scale-out queue: real ``regua serve --no-worker`` and ``regua worker``
processes on a fresh PostgreSQL database per test, artifacts in an S3 bucket on loopback (moto).

Each test kills something with SIGKILL mid-run and states what is stored afterwards: every run
reaches exactly one first-pass (``initial``) evaluation and is ``done``; every artifact downloads
through the API with its sha256 and is an object in the bucket; no stage job is left ``doing``
(a killed worker's jobs are retried once its heartbeat is older than the stalled-job timeout,
3 s here) and none failed for good.

PostgreSQL restart: with ``REGUA_TEST_PG_RESTART=1`` (set by ``.ci/run``) the server itself is
restarted (``pg_ctlcluster <version> main restart --mode immediate``); otherwise (a shared
development server) the restart is simulated by terminating every backend connected to the test's
database
(``pg_terminate_backend``), which breaks every connection of the fleet in the same way.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.fleet import STALLED_S, Fleet
from tests.helpers.pg import fresh_pg_database
from tests.helpers.s3 import REGION, S3Server
from tests.helpers.server import require_real_rendering
from tests.service.conftest import GOOD

pytestmark = [pytest.mark.heavy, pytest.mark.postgres, pytest.mark.browser, pytest.mark.sandbox]
TASK = "pelican-bicycle-static@1"
"""One frame and no masks per render (as the crash test): the faults are the queue's, and the
runs of a fault test need many real renders, each a fraction of the CPU of a masked one."""


@pytest.fixture
def fleet(tmp_path: Path, s3_server: S3Server) -> Iterator[tuple[Fleet, str]]:
    require_real_rendering()
    bucket = s3_server.new_bucket()
    env = {
        "REGUA_ARTIFACTS_URL": f"s3://{bucket}/runs",
        "REGUA_S3_ENDPOINT_URL": s3_server.endpoint,
        "REGUA_S3_REGION": REGION,
    }
    for url in fresh_pg_database("regua_faults"):
        f = Fleet(tmp_path, url, env)
        try:
            yield f, bucket
        finally:
            f.close()


def _submit(f: Fleet, n: int) -> list[str]:
    runs = [
        {"task": TASK, "model": {"label": f"m{i % 3}"}, "output": f"{GOOD}<!-- {i} -->"}
        for i in range(n)
    ]
    with f.client() as client:
        return client.submit_batch(runs)


def _check_stored(f: Fleet, s3_server: S3Server, bucket: str, ids: list[str]) -> None:
    """Exactly one initial evaluation per run, all done; artifacts whole and in the bucket."""
    assert f.done() == len(ids)
    per_run = f.sql(
        "SELECT r.id, count(e.id) FROM runs r LEFT JOIN evaluations e "
        "ON e.run_id = r.id AND e.kind = 'initial' GROUP BY r.id"
    )
    assert [n for _, n in per_run] == [1] * len(ids)

    # A run is done when its last stage is recorded, inside the job; procrastinate marks that
    # job finished only after the task returns, so a job may still read ``doing`` for a moment
    # (longer on a loaded machine). Wait for that state, bounded: a job really left ``doing``
    # (never retried, never finished) still fails here.
    f.wait_for(lambda: f.stage_jobs("doing") == 0, 60, "every stage job to end")
    assert f.stage_jobs("doing") == 0 and f.stage_jobs("failed") == 0
    keys = set(s3_server.keys(bucket))
    with f.client() as client:
        for run_id in ids:
            view = client.run(run_id)
            assert view["status"] == "done" and view["outcome"]["status"], view
            for art in view["artifacts"]:
                sha = art["sha256"]
                got = client.artifact(sha)
                assert got.status_code == 200, (art, got.text)
                assert hashlib.sha256(got.content).hexdigest() == sha
                assert f"runs/sha256/{sha[:2]}/{sha[2:]}" in keys


@pytest.mark.xdist_group("queue-faults-worker-killed")  # each fault test its own work unit
def test_a_worker_killed_mid_render_is_replaced(
    fleet: tuple[Fleet, str], s3_server: S3Server
) -> None:
    """Acceptance: serve --no-worker + two workers, 30 runs, one worker SIGKILLed midway and
    replaced: 30 runs done, one first-pass evaluation each, every artifact in the bucket."""
    f, bucket = fleet
    f.start_api()
    first = f.start_worker()
    f.start_worker()
    ids = _submit(f, 30)
    # a static run's check job renders it too (the stages after it run in the same job)
    f.wait_for(lambda: f.done() >= 3 and f.stage_jobs("doing", "check") > 0, 300, "renders")
    f.kill9(first)
    f.start_worker()
    f.wait_for(lambda: f.done() == len(ids), 400, "30 runs done")
    assert f.count("SELECT count(*) FROM procrastinate_workers") >= 2  # the replacement's two
    _check_stored(f, s3_server, bucket, ids)


@pytest.mark.xdist_group("queue-faults-api-killed")  # each fault test its own work unit
def test_the_api_killed_mid_run_loses_nothing(
    fleet: tuple[Fleet, str], s3_server: S3Server
) -> None:
    """SIGKILL of the API process: workers finish every accepted run; a new API serves them."""
    f, bucket = fleet
    f.start_api()
    f.start_worker()
    ids = _submit(f, 6)
    f.wait_for(lambda: f.done() >= 1, 150, "a first run")
    f.kill_api()
    f.wait_for(lambda: f.done() == len(ids), 180, "runs done without an API")
    f.start_api()
    _check_stored(f, s3_server, bucket, ids)


def _freeze_with_jobs_in_progress(f: Fleet, workers: list[subprocess.Popen[bytes]]) -> int:
    """Freeze every worker at a moment when some stage job is ``doing``; the count of such
    jobs, which cannot change while they are frozen (a job finishing between a count and the
    kill would otherwise make the count stale)."""
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        f.wait_for(lambda: f.stage_jobs("doing") > 0, 150, "jobs in progress")
        f.freeze(workers)
        doing = f.stage_jobs("doing")
        if doing > 0:
            return doing
        f.thaw(workers)  # every job in progress finished before the stop: try again
    raise AssertionError(f"no stage job was in progress when the workers stopped; {f.logs()}")


@pytest.mark.xdist_group("queue-faults-all-killed")  # each fault test its own work unit
def test_all_workers_killed_at_once(fleet: tuple[Fleet, str], s3_server: S3Server) -> None:
    """SIGKILL of every worker mid-run: the new workers retry the stalled jobs and finish."""
    f, bucket = fleet
    f.start_api()
    workers = [f.start_worker(), f.start_worker()]
    ids = _submit(f, 6)
    f.wait_for(lambda: f.done() >= 2, 150, "first runs")
    stranded = _freeze_with_jobs_in_progress(f, workers)
    for proc in workers:
        f.kill9(proc)
    assert f.stage_jobs("doing") == stranded  # nobody is left to say they stopped
    f.start_worker()
    f.start_worker()
    f.wait_for(lambda: f.done() == len(ids), 180, "runs done after the restart")
    retried = f.count(
        "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'regua.stage' AND attempts > 1"
    )
    assert retried >= 1
    _check_stored(f, s3_server, bucket, ids)


def _restart_postgres(f: Fleet) -> str:
    if os.environ.get("REGUA_TEST_PG_RESTART") == "1":
        version = sorted(os.listdir("/etc/postgresql"))[0]
        # immediate mode, as a crash would: a fast stop also waits for every connection still
        # being opened to give up (authentication_timeout, 60 s), and the fleet opens many
        try:
            subprocess.run(
                ["pg_ctlcluster", version, "main", "restart", "--mode", "immediate"],
                check=True,
                timeout=120,
            )
        finally:  # never leave the server down for the tests that follow
            if subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1"]).returncode != 0:
                subprocess.run(["pg_ctlcluster", version, "main", "start"], timeout=120)
        return "restarted"
    name = f.pg_url.rsplit("/", 1)[1]
    f.sql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = :name AND pid <> pg_backend_pid()",
        name=name,
    )
    return "terminated"


@pytest.mark.serial  # a real restart breaks every connection to the server, other workers' too
def test_a_postgres_restart_mid_run(fleet: tuple[Fleet, str], s3_server: S3Server) -> None:
    """PostgreSQL goes away mid-run (and again during the stalled-job recovery that follows a
    killed worker): the workers reconnect and every run still ends once."""
    f, bucket = fleet
    f.start_api()
    first = f.start_worker()
    f.start_worker()
    ids = _submit(f, 6)
    f.wait_for(lambda: f.done() >= 2, 150, "first runs")
    _restart_postgres(f)
    f.kill9(first)
    time.sleep(STALLED_S)  # the recovery of the killed worker's jobs is due about now
    _restart_postgres(f)
    f.wait_for(lambda: f.done() == len(ids), 180, "runs done after the restarts")
    _check_stored(f, s3_server, bucket, ids)
