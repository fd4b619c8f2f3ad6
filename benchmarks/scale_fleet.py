"""The fleet ``benchmarks/scale.py`` measures, and the runs it submits to it.

One API process and a growing number of worker processes on a fresh PostgreSQL database and a
moto S3 bucket; runs submitted at once or one at a time, waited for with the API's long poll.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from benchmarks.scale_trace import Probe, worker_names
from regua.settings import Settings
from tests.helpers.api_client import JsonClient
from tests.helpers.fleet import Fleet
from tests.helpers.ports import free_port

REPO = Path(__file__).resolve().parent.parent
TASK = "pelican-bicycle-structured@1"
GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()
PG_ADMIN = os.environ.get("REGUA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
WAIT_S = 30.0
"""The longest wait one look at a run asks the API for (``GET /v1/runs/{id}?wait_s=``)."""
WARM_ROUNDS = 10
"""Warm-up batches a grown fleet gets at most until every process has rendered a run."""


def runs(n: int, tag: str, panel: str | None = None) -> list[dict[str, object]]:
    """``n`` distinct submissions (distinct bytes, the same drawing), judged by ``panel``."""
    extra = {"panel": panel} if panel else {}
    return [
        {"task": TASK, "model": {"label": "bench"}, "output": f"{GOOD}<!-- {tag} {i} -->", **extra}
        for i in range(n)
    ]


def wait_done(client: JsonClient, ids: list[str], timeout_s: float = 900) -> None:
    """Wait until every run is done: a long poll on the oldest pending run at a time."""
    deadline = time.monotonic() + timeout_s
    pending = list(ids)
    while pending and (left := deadline - time.monotonic()) > 0:
        if client.run(pending[0], wait_s=min(WAIT_S, left))["status"] == "done":
            pending.pop(0)
    if pending:
        raise SystemExit(f"{len(pending)} runs not done after {timeout_s}s")


def throughput(
    client: JsonClient, n: int, tag: str, panel: str | None = None, ids: list[str] | None = None
) -> float:
    """Submit ``n`` runs at once; runs per second until the last is done (their ids in ``ids``)."""
    t0 = time.monotonic()
    batch = client.submit_batch(runs(n, tag, panel))
    wait_done(client, batch)
    if ids is not None:
        ids.extend(batch)
    return n / (time.monotonic() - t0)


def pg_database() -> str:
    """A fresh database on the loopback server; its SQLAlchemy URL."""
    name = f"regua_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    return f"{base}/{name}"


def drop_database(url: str) -> None:
    """Drop a database made by :func:`pg_database`."""
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')


@contextmanager
def s3_bucket() -> Iterator[dict[str, str]]:
    """A moto S3 server on loopback with one bucket; the fleet's artifact settings."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"})
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    import boto3

    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="regua-scale")
    try:
        yield {"REGUA_ARTIFACTS_URL": "s3://regua-scale/runs", "REGUA_S3_ENDPOINT_URL": endpoint}
    finally:
        moto.stop()


class Growing:
    """One fleet on a fresh database, grown a worker at a time."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        """Start the API; no worker yet."""
        self.url = pg_database()
        self.fleet = Fleet(root / "fleet", self.url, env)
        self.fleet.root.mkdir(parents=True)
        self.fleet.start_api()
        self.workers = 0
        self.client = self.fleet.client()
        self.names: dict[int, str] = {}
        """The procrastinate workers' ids, named after their process (``w1``, ``w2``...)."""

    def grow(self, to: int) -> None:
        """Start workers until ``to`` run, each ready: all its queue workers, a warm render pool.

        A process registers one procrastinate worker per lane (render, heavy, judge) and starts
        its render pool on its first render: the benchmark measures a fleet, not a process
        starting up (Chromium's start takes a CPU for seconds), so each new process must have
        registered every worker and rendered a run before a figure is taken.
        """
        libpq = self.url.replace("+psycopg", "")
        lanes = len(Settings().worker_lanes)
        while self.workers < to:
            self.fleet.start_worker()
            self.workers += 1
            self.registered(lanes * self.workers)
            self.names = worker_names(libpq, self.names, f"w{self.workers}")
        for _ in range(WARM_ROUNDS):
            throughput(self.client, 2 * self.workers, f"warm-{self.workers}-{uuid.uuid4().hex}")
            if self.rendered() >= {f"w{i}" for i in range(1, self.workers + 1)}:
                return
        raise SystemExit(f"a worker process rendered no run in {WARM_ROUNDS} warm-up rounds")

    def registered(self, want: int) -> None:
        """Wait until ``want`` procrastinate workers are registered."""
        self.fleet.wait_for(
            lambda: self.fleet.count("SELECT count(*) FROM procrastinate_workers") >= want,
            180,
            f"{want} procrastinate workers registered",
        )

    def rendered(self) -> set[str]:
        """The worker processes that have run a check (and so started their render pool)."""
        ids = self.fleet.sql(
            "SELECT DISTINCT worker_id FROM procrastinate_jobs WHERE task_name = 'regua.stage'"
            " AND args->>'stage' = 'check' AND status = 'succeeded'"
        )
        return {self.names.get(int(str(i)), "?") for (i,) in ids if i is not None}

    def probe(self, folder: Path) -> Probe:
        """CPU time of every process of the fleet (see :mod:`benchmarks.scale_trace`)."""
        folder.mkdir(exist_ok=True)
        assert self.fleet.api is not None
        probe = Probe(folder, PG_ADMIN, self.url.rsplit("/", 1)[1])
        probe.name(self.fleet.api.pid, "api")
        for i, proc in enumerate(self.fleet.workers, 1):
            probe.name(proc.pid, f"worker-{i}")
        return probe

    def close(self) -> None:
        """Stop the fleet and drop its database."""
        self.client.close()
        self.fleet.close()
        drop_database(self.url)
