"""Worker lifecycle: retries on fresh workers, recycling, thread safety, refusal, close."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from regua.errors import SandboxError
from sandbox import JobOutcome, SandboxLimits, WorkerPool
from sandbox.contract import PROBE_HANDLER
from tests.sandbox.conftest import require_backend, worker_pids

pytestmark = pytest.mark.sandbox
LIMITS = SandboxLimits(
    memory_mb=512, max_processes=128, wall_timeout_s=20, max_output_bytes=1 << 20
)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """A shared pool: 2 workers, recycled every 4 jobs, one retry."""
    require_backend("bubblewrap")
    with WorkerPool(
        "bubblewrap", PROBE_HANDLER, {}, size=2, max_jobs_per_worker=4, limits=LIMITS, retries=1
    ) as pool:
        yield pool


def echo(pool: WorkerPool, **job: object) -> JobOutcome:
    outcome = pool.run({"op": "echo", **job})
    assert outcome.ok, f"{outcome.cause}: {outcome.detail}"
    return outcome


def test_job_round_trip_carries_json_and_files(pool: WorkerPool) -> None:
    outcome = echo(pool, value={"a": [1, 2.5, None]}, files={"note.txt": "héllo"})
    assert outcome.result is not None
    assert outcome.result["job"]["value"] == {"a": [1, 2.5, None]}
    assert outcome.files == {"note.txt": "héllo".encode()}
    assert outcome.attempts == 1
    assert outcome.worker_id is not None and outcome.worker_id.startswith("bubblewrap-")
    measured = {k: outcome.sandbox[k] for k in ("backend", "measured", "uid", "network")}
    assert measured == {
        "backend": "bubblewrap",
        "measured": True,
        "uid": 65534,
        "network": "loopback-only",
    }
    assert outcome.to_dict()["files"] == {"note.txt": 6}


def test_crash_mid_job_is_incomplete_then_retried_on_a_fresh_worker() -> None:
    require_backend("bubblewrap")
    others = set(worker_pids())
    with WorkerPool("bubblewrap", PROBE_HANDLER, {}, size=1, limits=LIMITS, retries=2) as pool:
        (victim,) = set(worker_pids()) - others
        killer = threading.Timer(0.5, os.kill, (victim, signal.SIGKILL))
        killer.start()
        outcome = pool.run({"op": "sleep", "seconds": 2}, timeout_s=10)
        killer.join()
        assert outcome.ok, outcome.detail
        assert outcome.attempts == 2
        assert [h["cause"] for h in outcome.history] == ["crash"]
        assert outcome.history[0]["worker_id"] != outcome.worker_id
        assert "pipe closed" in outcome.history[0]["detail"]
        assert pool.stats["incomplete_crash"] == 1
        assert victim not in worker_pids()


def test_crash_every_time_ends_incomplete_after_the_retries(pool: WorkerPool) -> None:
    outcome = pool.run({"op": "crash"})
    assert outcome.status == "incomplete"
    assert outcome.cause == "crash"
    assert outcome.attempts == 2
    assert len(outcome.history) == 1
    assert outcome.worker_id != outcome.history[0]["worker_id"]
    assert echo(pool).result is not None  # the next job after a bad one works


def test_handler_error_is_incomplete_not_retried_and_worker_survives(pool: WorkerPool) -> None:
    outcome = pool.run({"op": "raise", "message": "boom"})
    assert outcome.status == "incomplete"
    assert outcome.cause == "handler_error"
    assert "RuntimeError: boom" in outcome.detail
    assert outcome.attempts == 1
    unknown = pool.run({"op": "no-such-op"})
    assert unknown.cause == "handler_error"
    assert "unknown probe op" in unknown.detail
    echo(pool)


def test_workers_are_recycled_after_n_jobs() -> None:
    require_backend("bubblewrap")
    with WorkerPool(
        "bubblewrap", PROBE_HANDLER, {}, size=1, max_jobs_per_worker=3, limits=LIMITS
    ) as pool:
        ids = [echo(pool).worker_id for _ in range(7)]
        pids = [(echo(pool).result or {}).get("pid") for _ in range(2)]
        assert ids[:3] == [ids[0]] * 3
        assert ids[3:6] == [ids[3]] * 3
        assert len({ids[0], ids[3], ids[6]}) == 3
        assert pool.stats["retired_max_jobs"] == 3
        assert pids[0] == pids[1]  # same long-lived process between recycles


def test_workers_are_recycled_when_memory_grows_past_the_bound() -> None:
    require_backend("bubblewrap")
    with WorkerPool("bubblewrap", PROBE_HANDLER, {}, size=1, max_rss_mb=1, limits=LIMITS) as pool:
        first = echo(pool).worker_id
        second = echo(pool).worker_id
        assert first != second
        assert pool.stats["retired_memory"] >= 1
        assert pool.peak_rss_bytes > 1024 * 1024


def test_concurrent_runs_from_many_threads(pool: WorkerPool) -> None:
    def job(i: int) -> int:
        outcome = echo(pool, i=i)
        assert outcome.result is not None
        return int(outcome.result["job"]["i"])

    with ThreadPoolExecutor(max_workers=8) as executor:
        got = list(executor.map(job, range(40)))
    assert got == list(range(40))


def test_a_handler_that_refuses_to_serve_fails_the_pool_loudly() -> None:
    require_backend("bubblewrap")
    with pytest.raises(SandboxError, match="refuses to serve"):
        WorkerPool("bubblewrap", PROBE_HANDLER, {"refuse": True}, size=1, limits=LIMITS)
    with pytest.raises(SandboxError, match="ModuleNotFoundError"):
        WorkerPool("bubblewrap", "no_such_module:factory", {}, size=1, limits=LIMITS)


def test_close_stops_every_worker_and_later_runs_are_incomplete() -> None:
    require_backend("bubblewrap")
    before = set(worker_pids())
    pool = WorkerPool("bubblewrap", PROBE_HANDLER, {}, size=2, limits=LIMITS)
    assert len(set(worker_pids()) - before) == 2
    assert pool.startup_ms and all(ms < 5000 for ms in pool.startup_ms)
    pool.close()
    time.sleep(0.2)
    assert set(worker_pids()) - before == set()
    outcome = pool.run({"op": "echo"})
    assert outcome.status == "incomplete"
    assert outcome.cause == "pool_closed"


def test_sandbox_startup_failure_is_reported_with_its_cause() -> None:
    require_backend("bubblewrap")
    with pytest.raises(SandboxError, match="no sandboxed worker could start"):
        WorkerPool(
            "bubblewrap", PROBE_HANDLER, {}, size=1, limits=LIMITS, python="/nonexistent/python"
        )
