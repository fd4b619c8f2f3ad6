"""The sandbox contract: every backend must pass this module (parametrised by backend name).

Each test runs a probe job (``sandbox.probe``) inside a sandbox of the backend and checks the
property from the host side as well where it can (the loopback listener counts connections, the
host's process table shows the killed tree gone).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import SandboxLimits, WorkerPool, available_backends
from sandbox.contract import ALLOWED_ENV, PROBE_HANDLER, LoopbackListener, quick_checks
from tests.sandbox.conftest import require_backend, worker_pids

BACKENDS = ["bubblewrap"]
LIMITS = SandboxLimits(
    memory_mb=512,
    cpu_s=60,
    max_processes=256,
    max_open_files=256,
    wall_timeout_s=20,
    max_output_bytes=1 << 20,
)
CHROMIUM = "/usr/lib/chromium/chromium"
SECRET_ENV = "REGUA_CONTRACT_TEST_SECRET"
SECRET_VALUE = "s3cr3t-value-that-must-not-leak-2f7c"

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module", params=BACKENDS)
def pool(request: pytest.FixtureRequest) -> Iterator[WorkerPool]:
    """One probe pool per backend, started while a secret sits in the test's environment."""
    name = request.param
    require_backend(name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SECRET_ENV, SECRET_VALUE)
        pool = WorkerPool(name, PROBE_HANDLER, {}, size=2, limits=LIMITS, retries=1)
    with pool:
        yield pool


def ok_result(pool: WorkerPool, job: dict[str, Any], timeout_s: float = 30) -> dict[str, Any]:
    outcome = pool.run(job, timeout_s=timeout_s)
    assert outcome.status == "ok", f"{job}: {outcome.cause}: {outcome.detail}"
    assert outcome.result is not None
    return outcome.result


def test_builtin_backends_are_registered() -> None:
    assert set(BACKENDS) <= set(available_backends())


def test_cannot_connect_to_a_host_loopback_listener(pool: WorkerPool) -> None:
    with LoopbackListener() as listener:
        for host in ("127.0.0.1", "localhost"):
            r = ok_result(pool, {"op": "tcp_connect", "host": host, "port": listener.port})
            assert r["ok"] is False, f"connected to the host listener via {host}"
        time.sleep(0.3)
    assert listener.connections == 0


def test_has_only_loopback_and_no_route_out(pool: WorkerPool) -> None:
    r = ok_result(pool, {"op": "interfaces"})
    assert r["interfaces"] == ["lo"]
    assert r["routes"] == []
    r = ok_result(pool, {"op": "tcp_connect", "host": "1.1.1.1", "port": 443})
    assert r["ok"] is False
    assert "unreachable" in str(r["error"]).lower()


def test_cannot_resolve_names(pool: WorkerPool) -> None:
    for name in ("example.com", "pypi.org"):
        r = ok_result(pool, {"op": "resolve", "name": name})
        assert r["ok"] is False, f"resolved {name}: {r}"


def test_runs_as_non_root_without_capabilities(pool: WorkerPool) -> None:
    r = ok_result(pool, {"op": "whoami"})
    assert r["uid"] == r["euid"] == 65534
    assert r["gid"] == 65534
    assert r["groups"] == []
    status = r["status"]
    assert isinstance(status, dict)
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0" * 16
    assert status["NoNewPrivs"] == "1"
    assert r["hostname"] == "sandbox"
    outcome = pool.run({"op": "whoami"})
    assert outcome.sandbox["uid"] == 65534
    assert outcome.sandbox["network"] == "loopback-only"


def test_cannot_read_a_secret_planted_on_the_host(pool: WorkerPool, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("planted-secret")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    for path in (secret, Path("/etc/shadow"), Path("/root/.bash_history")):
        r = ok_result(pool, {"op": "read_file", "path": str(path)})
        assert r["ok"] is False, f"read {path}: {r}"
    listing = ok_result(pool, {"op": "listdir", "path": "/"})
    assert "data" not in listing["entries"]
    repo = ok_result(pool, {"op": "listdir", "path": str(Path(__file__).parents[2])})
    assert set(repo["entries"]) <= {".venv", "regua", "tasks", "sandbox", "render"}


def test_system_is_read_only_and_tmp_is_private(pool: WorkerPool) -> None:
    for path in ("/usr/regua-probe", "/etc/regua-probe", str(Path(__file__))):
        assert ok_result(pool, {"op": "write_file", "path": path})["ok"] is False
    assert ok_result(pool, {"op": "write_file", "path": "/tmp/probe"})["ok"] is True
    with tempfile.NamedTemporaryFile(dir="/tmp", prefix="regua-host-only-") as planted:
        host_tmp = set(os.listdir("/tmp"))
        inside = set(ok_result(pool, {"op": "listdir", "path": "/tmp"})["entries"])
    assert Path(planted.name).name not in inside
    # a checkout (or venv) that itself lives under /tmp is bound read-only at its own path
    code_roots = {
        p.relative_to("/tmp").parts[0]
        for p in (Path(__file__).resolve().parents[2], Path(sys.prefix).resolve())
        if p.is_relative_to("/tmp")
    }
    assert not (host_tmp & inside) - {"probe"} - code_roots


def test_cannot_see_the_test_environment(pool: WorkerPool) -> None:
    env = ok_result(pool, {"op": "env"})["env"]
    assert isinstance(env, dict)
    assert SECRET_ENV not in env
    assert SECRET_VALUE not in "".join(env.values())
    assert set(env) <= ALLOWED_ENV


def test_fork_bomb_is_contained(pool: WorkerPool) -> None:
    r = ok_result(pool, {"op": "fork_bomb", "limit": 100_000}, timeout_s=60)
    assert r["ok"] is False
    assert isinstance(r["forked"], int)
    assert 0 < r["forked"] < LIMITS.max_processes
    assert "EAGAIN" in str(r["error"])
    assert ok_result(pool, {"op": "echo", "n": 1})["ok"] is True


def test_memory_hog_is_contained(pool: WorkerPool) -> None:
    r = ok_result(pool, {"op": "memory_hog", "target_mb": 4 * LIMITS.memory_mb}, timeout_s=60)
    assert r["ok"] is False
    assert r["error"] == "MemoryError"
    assert isinstance(r["allocated_mb"], int)
    assert r["allocated_mb"] <= LIMITS.memory_mb
    assert ok_result(pool, {"op": "echo"})["ok"] is True


def test_memory_spread_over_processes_is_killed_by_the_watchdog(pool: WorkerPool) -> None:
    per_process = LIMITS.memory_mb // 2  # each child stays under RLIMIT_DATA, the tree does not
    job = {"op": "memory_hog", "target_mb": per_process, "processes": 4, "hold_s": 30}
    outcome = pool.run(job, timeout_s=25)
    assert outcome.status == "incomplete"
    assert outcome.cause == "oom"
    assert outcome.attempts == 2  # oom is retried once (retries=1), then reported
    assert ok_result(pool, {"op": "echo"})["ok"] is True


def test_job_past_its_time_is_killed_and_reported_as_timeout(pool: WorkerPool) -> None:
    before = set(worker_pids())
    started = time.monotonic()
    outcome = pool.run({"op": "sleep", "seconds": 60, "children": 5}, timeout_s=1.5)
    elapsed = time.monotonic() - started
    assert outcome.status == "incomplete"
    assert outcome.cause == "timeout"
    assert outcome.attempts == 1
    assert 8 > elapsed > 1.4
    time.sleep(0.5)
    killed = before - set(worker_pids())
    assert len(killed) == 1  # the worker that held the job is gone, with its 5 children
    assert len(worker_pids()) <= pool.size
    assert ok_result(pool, {"op": "echo"})["ok"] is True


def test_oversize_output_is_refused(pool: WorkerPool) -> None:
    outcome = pool.run({"op": "write_big_output", "bytes": 2 * LIMITS.max_output_bytes})
    assert outcome.status == "incomplete"
    assert outcome.cause == "output_too_large"
    assert outcome.files == {}
    small = pool.run({"op": "write_big_output", "bytes": 1000})
    assert small.ok
    assert small.files == {"big.bin": b"\x00" * 1000}


@pytest.mark.browser
def test_chromium_keeps_its_own_sandbox_inside(pool: WorkerPool) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian Chromium not found at {CHROMIUM} (apt-get install chromium)")
    job = {"op": "chromium_sandbox", "path": CHROMIUM, "settle_s": 60}
    r = ok_result(pool, job, timeout_s=90)
    own = r["worker_ns"]
    renderers = [p for p in r["processes"] if p["type"] == "renderer"]
    assert renderers, r
    for proc in renderers:
        assert proc["Seccomp"] == "2"  # seccomp-bpf filter
        assert proc["NoNewPrivs"] == "1"
        assert proc["ns_user"] != own["user"]  # Chromium's namespace sandbox: own user ns,
        assert proc["ns_pid"] != own["pid"]  # own pid ns,
        assert proc["ns_net"] != own["net"]  # and own (empty) network ns
        assert proc["Uid"] == "65534"
    browsers = [p for p in r["processes"] if p["type"] == "browser"]
    assert browsers, r
    assert browsers[0]["ns_user"] == own["user"]


def test_quick_checks_of_doctor_all_pass(pool: WorkerPool) -> None:
    results = quick_checks(pool)
    failed = [c for c in results if not c.ok]
    assert not failed, failed
    assert len(results) == 9
