"""A scale-out fleet under test: ``regua serve --no-worker`` plus ``regua worker`` processes.

Every process is a real subprocess with its own data folder and environment, sharing one
PostgreSQL database, one artifact store (an S3 bucket on loopback, or a local folder) and one
installation secret. Processes are killed with SIGKILL (their process group: the worker and its
sandboxed render workers, as a crashed machine would lose them) and replaced.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import create_engine, text

from service.api.client import read_token
from service.server.run import wait_ready
from tests.helpers.api_client import JsonClient
from tests.helpers.ports import free_port
from tests.helpers.server import REPO, env_settings, serve_here

STALLED_S = 3.0
"""The stalled-job timeout of the fleets under test (``REGUA_QUEUE_STALLED_S``)."""


class Fleet:
    """One API process and any number of workers on one database."""

    def __init__(self, root: Path, pg_url: str, env: Mapping[str, str]) -> None:
        self.root = root
        self.pg_url = pg_url
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "REGUA_DATABASE_URL": pg_url,
            "REGUA_QUEUE": "procrastinate",
            "REGUA_QUEUE_STALLED_S": str(STALLED_S),
            "REGUA_RENDER_WORKERS": "1",
            "REGUA_SECRET_FILE": str(root / "secret"),
            "REGUA_SUBMIT_RATE_PER_MINUTE": "0",
            **env,
        }
        self.api: subprocess.Popen[bytes] | None = None
        self.api_dir = root / "api"
        self.url = ""
        self.workers: list[subprocess.Popen[bytes]] = []
        self._count = 0
        self._logs: list[BinaryIO] = []
        self.engine = create_engine(pg_url, pool_pre_ping=True)

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        log = (self.root / f"{name}.log").open("wb")
        self._logs.append(log)
        cmd = [sys.executable, "-m", "service.cli", *args]
        return subprocess.Popen(
            cmd,
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_api(self) -> None:
        """Start ``regua serve --no-worker`` on a free port and wait until it answers."""
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        args = ["serve", "--no-worker", "--port", str(port), "--data-dir", str(self.api_dir)]
        self.api = self._spawn(args, f"api-{port}")
        wait_ready(self.url, 90)

    @contextlib.contextmanager
    def api_here(self) -> Iterator[None]:
        """The API of :meth:`start_api` (same settings, data folder and start) served on a thread
        of this process while the block runs, for a test whose point is not the API's process:
        it defers jobs or reads what the workers stored, and is never killed."""
        settings = env_settings(self.api_dir, {**self.env, "REGUA_SERVE_WORKER": "false"})
        with serve_here(settings) as url:
            self.url = url
            yield

    def start_worker(self) -> subprocess.Popen[bytes]:
        """Start one more ``regua worker`` with a data folder of its own."""
        self._count += 1
        data = self.root / f"worker-{self._count}"
        proc = self._spawn(["worker", "--data-dir", str(data)], f"worker-{self._count}")
        self.workers.append(proc)
        return proc

    def client(self) -> JsonClient:
        """An admin client of the API."""
        return JsonClient(self.url, read_token(self.api_dir))

    def sql(self, query: str, **params: object) -> list[tuple[object, ...]]:
        """Rows of a query on the fleet's database (the test's own eyes)."""
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query), params).all()]

    def count(self, query: str, **params: object) -> int:
        """The single number a query returns."""
        value = self.sql(query, **params)[0][0]
        assert value is None or isinstance(value, int), value
        return value or 0

    def done(self) -> int:
        """Runs finished."""
        return self.count("SELECT count(*) FROM runs WHERE status = 'done'")

    def wait_for(self, what: Callable[[], bool], timeout_s: float, label: str) -> None:
        """Poll ``what`` until it is true; fail naming ``label`` at the deadline."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if what():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out after {timeout_s}s waiting for {label}; {self.logs()}")

    def stage_jobs(self, status: str, stage: str | None = None) -> int:
        """Stage jobs in ``status`` (of one stage when given)."""
        return self.count(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'regua.stage' "
            "AND status = CAST(:status AS procrastinate_job_status) "
            "AND (CAST(:stage AS text) IS NULL OR args->>'stage' = :stage)",
            status=status,
            stage=stage,
        )

    def logs(self) -> str:
        """The tail of every process's log (for failure messages)."""
        parts = []
        for path in sorted(self.root.glob("*.log")):
            parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-1500:]}")
        return "\n".join(parts)

    def freeze(self, procs: list[subprocess.Popen[bytes]], timeout_s: float = 30) -> None:
        """SIGSTOP the process groups of ``procs`` and wait until the database has finished
        every statement they had sent, so the stored job states stop moving.

        A frozen worker cannot start or finish a job; a statement it sent just before the stop
        is still being executed by its backend, so the wait lasts until no backend of the
        fleet's database but the test's own is ``active``."""
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGSTOP)
        name = self.pg_url.rsplit("/", 1)[1]
        self.wait_for(
            lambda: (
                self.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = :name "
                    "AND state = 'active' AND backend_type = 'client backend' "
                    "AND pid <> pg_backend_pid()",
                    name=name,
                )
                == 0
            ),
            timeout_s,
            "the frozen processes' statements to finish",
        )

    @staticmethod
    def thaw(procs: list[subprocess.Popen[bytes]]) -> None:
        """SIGCONT the process groups of ``procs``."""
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGCONT)

    @staticmethod
    def kill9(proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL a process and its process group (its sandboxed render workers too)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def kill_api(self) -> None:
        """SIGKILL the API process."""
        assert self.api is not None
        self.kill9(self.api)

    def close(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL) and the test's engine."""
        procs = [p for p in [self.api, *self.workers] if p is not None]
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(15)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        self.engine.dispose()
        for log in self._logs:
            log.close()
