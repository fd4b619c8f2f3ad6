"""The Unix-socket bridge used by the Docker deployment (mechanism only: no isolation here)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import SandboxLimits, WorkerPool, get_backend
from sandbox.contract import PROBE_HANDLER
from sandbox.hostproc import tree_pids
from sandbox.socket_bridge import SocketBackend


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A bridge process serving the probe handler on a temporary socket (path, pid)."""
    path = tmp_path_factory.mktemp("bridge") / "render.sock"
    argv = [sys.executable, "-m", "sandbox.socket_bridge", "--socket", str(path)]
    proc = subprocess.Popen([*argv, "--handler", PROBE_HANDLER, "--memory-mb", "512"])
    deadline = time.monotonic() + 20
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), "bridge did not create its socket"
    yield path, proc.pid
    proc.kill()
    proc.wait()


def test_socket_backend_is_registered_and_explains_a_missing_socket() -> None:
    backend = get_backend("socket")
    assert backend.name == "socket"
    ok, why = SocketBackend("/nonexistent/regua.sock").check()
    assert ok is False
    assert "/nonexistent/regua.sock" in why


def bridge_workers(bridge_pid: int) -> int:
    return len(tree_pids(bridge_pid)) - 1


def test_pool_over_the_bridge_serves_times_out_and_retries(bridge: tuple[Path, int]) -> None:
    path, bridge_pid = bridge
    limits = SandboxLimits(memory_mb=512, wall_timeout_s=10)
    with WorkerPool(SocketBackend(str(path)), PROBE_HANDLER, {}, size=1, limits=limits) as pool:
        ok = pool.run({"op": "echo", "files": {"a.txt": "A"}})
        assert ok.ok, ok.detail
        assert ok.files == {"a.txt": b"A"}
        assert ok.sandbox["backend"] == "socket"
        assert bridge_workers(bridge_pid) == 1
        timed_out = pool.run({"op": "sleep", "seconds": 30, "children": 3}, timeout_s=1)
        assert timed_out.cause == "timeout"
        deadline = time.monotonic() + 10  # the bridge kills the hung-up worker's group
        while bridge_workers(bridge_pid) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert bridge_workers(bridge_pid) <= 1  # at most the replacement worker
        crashed = pool.run({"op": "crash"})
        assert crashed.cause == "crash"
        assert crashed.attempts == 3
        assert pool.run({"op": "echo"}).ok
