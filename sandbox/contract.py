"""The contract's quick checks: what every backend must guarantee, probed from inside.

Shared by ``regua doctor`` and the contract suite (``tests/sandbox/test_contract.py``), which also
asserts each property in detail. Every check runs jobs of the probe handler
(``sandbox.probe:create_handler``) on a pool and returns a :class:`ContractCheck`.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.pool import WorkerPool

PROBE_HANDLER = "sandbox.probe:create_handler"
ALLOWED_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "PWD",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONNOUSERSITE",
        "REGUA_SANDBOX_BACKEND",
    }
)


@dataclass(frozen=True)
class ContractCheck:
    """Result of one quick check."""

    name: str
    ok: bool
    detail: str


class LoopbackListener:
    """A TCP listener on the host's loopback that counts every connection it accepts."""

    def __init__(self) -> None:
        """Bind a listening socket on an ephemeral loopback port (not yet accepting)."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def __enter__(self) -> LoopbackListener:
        """Start accepting connections."""
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop accepting and close the socket."""
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def _result(pool: WorkerPool, job: dict[str, Any], timeout_s: float = 30.0) -> dict[str, Any]:
    outcome = pool.run(job, timeout_s=timeout_s)
    if not outcome.ok or outcome.result is None:
        return {"ok": None, "error": f"job incomplete: {outcome.cause}: {outcome.detail[:300]}"}
    return outcome.result


def check_non_root(pool: WorkerPool) -> ContractCheck:
    """Runs as a non-root uid with no capabilities."""
    r = _result(pool, {"op": "whoami"})
    caps = (r.get("status") or {}).get("CapEff")
    ok = r.get("uid") not in (None, 0) and r.get("euid") != 0 and caps == "0000000000000000"
    return ContractCheck("non_root", ok, f"uid={r.get('uid')} gid={r.get('gid')} CapEff={caps}")


def check_no_loopback_tcp(pool: WorkerPool) -> ContractCheck:
    """Cannot reach a listener on the host's loopback; the listener sees zero connections."""
    with LoopbackListener() as listener:
        r = _result(pool, {"op": "tcp_connect", "host": "127.0.0.1", "port": listener.port})
        time.sleep(0.2)
    ok = r.get("ok") is False and listener.connections == 0
    detail = f"connect: {r.get('error', 'CONNECTED')}; listener saw {listener.connections}"
    return ContractCheck("no_tcp_to_host_loopback", ok, detail)


def check_no_route_out(pool: WorkerPool) -> ContractCheck:
    """Only a loopback interface and no route."""
    r = _result(pool, {"op": "interfaces"})
    c = _result(pool, {"op": "tcp_connect", "host": "1.1.1.1", "port": 443})
    ok = r.get("interfaces") == ["lo"] and not r.get("routes") and c.get("ok") is False
    return ContractCheck("no_route_out", ok, f"interfaces={r.get('interfaces')}; {c.get('error')}")


def check_no_dns(pool: WorkerPool) -> ContractCheck:
    """Cannot resolve a public name."""
    r = _result(pool, {"op": "resolve", "name": "example.com"})
    return ContractCheck("no_dns", r.get("ok") is False, str(r.get("error") or r))


def check_no_host_files(pool: WorkerPool) -> ContractCheck:
    """Cannot read a world-readable secret planted on the host, nor /etc/shadow."""
    with tempfile.NamedTemporaryFile("w", prefix="regua-secret-", suffix=".txt") as fh:
        fh.write("regua-contract-secret")
        fh.flush()
        os.chmod(fh.name, 0o644)
        planted = _result(pool, {"op": "read_file", "path": fh.name})
    shadow = _result(pool, {"op": "read_file", "path": "/etc/shadow"})
    ok = planted.get("ok") is False and shadow.get("ok") is False
    return ContractCheck("no_host_files", ok, f"planted: {planted.get('error')}")


def check_clean_env(pool: WorkerPool) -> ContractCheck:
    """The environment holds only the sandbox's short explicit list."""
    env = _result(pool, {"op": "env"}).get("env")
    extra = sorted(set(env or {}) - ALLOWED_ENV) if isinstance(env, dict) else ["(no env)"]
    return ContractCheck("clean_env", env is not None and not extra, f"unexpected: {extra}")


def check_fork_bomb(pool: WorkerPool) -> ContractCheck:
    """A fork bomb stops at the process limit and the next job still works."""
    r = _result(pool, {"op": "fork_bomb", "limit": 100_000}, timeout_s=60)
    after = _result(pool, {"op": "echo"})
    limit = pool.limits.max_processes
    ok = r.get("ok") is False and int(r.get("forked") or 0) < limit and after.get("ok") is True
    return ContractCheck("fork_bomb", ok, f"forked {r.get('forked')} (<{limit}): {r.get('error')}")


def check_memory_hog(pool: WorkerPool) -> ContractCheck:
    """Allocating twice the memory limit fails inside; the host is untouched."""
    limit = pool.limits.memory_mb
    r = _result(pool, {"op": "memory_hog", "target_mb": 2 * limit}, timeout_s=60)
    ok = r.get("ok") is False and int(r.get("allocated_mb") or 0) <= limit
    return ContractCheck("memory_hog", ok, f"allocated {r.get('allocated_mb')} MB (limit {limit})")


def check_timeout(pool: WorkerPool) -> ContractCheck:
    """A job past its time is killed and reported as a timeout; the next job works."""
    started = time.monotonic()
    outcome = pool.run({"op": "sleep", "seconds": 60, "children": 3}, timeout_s=1.0)
    elapsed = time.monotonic() - started
    after = _result(pool, {"op": "echo"})
    ok = outcome.cause == "timeout" and elapsed < 10 and after.get("ok") is True
    return ContractCheck("timeout", ok, f"cause={outcome.cause} after {elapsed:.1f} s")


def check_chromium_sandbox(pool: WorkerPool) -> ContractCheck:
    """Chromium starts inside with its own sandbox on (renderers: own user ns + seccomp)."""
    r = _result(pool, {"op": "chromium_sandbox", "settle_s": 45}, timeout_s=90)
    renderers = [p for p in r.get("processes") or [] if p.get("type") == "renderer"]
    detail = (
        f"{len(renderers)} renderer(s), seccomp={sorted({p.get('Seccomp') for p in renderers})}"
    )
    return ContractCheck("chromium_sandbox", r.get("ok") is True, r.get("error") or detail)


QUICK_CHECKS: tuple[Callable[[WorkerPool], ContractCheck], ...] = (
    check_non_root,
    check_no_loopback_tcp,
    check_no_route_out,
    check_no_dns,
    check_no_host_files,
    check_clean_env,
    check_fork_bomb,
    check_memory_hog,
    check_timeout,
)


def quick_checks(pool: WorkerPool, *, chromium: bool = False) -> list[ContractCheck]:
    """Run every quick check (plus Chromium's sandbox when ``chromium``) on a probe pool."""
    checks = list(QUICK_CHECKS) + ([check_chromium_sandbox] if chromium else [])
    results = []
    for check in checks:
        try:
            results.append(check(pool))
        except Exception as exc:  # a broken check is a failed check, reported as such
            results.append(ContractCheck(check.__name__[6:], False, f"{type(exc).__name__}: {exc}"))
    return results
