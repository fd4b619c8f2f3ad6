"""Scale-out benchmark: what extra workers buy, and what the queue costs a run, in one run.

One fleet — `regua serve --no-worker` plus `regua worker` processes on one PostgreSQL database
and one S3 bucket (moto on loopback) — grows from 1 to 3 workers; each figure is printed beside
its reference measured in the same run, with the load average:

- CPU-bound: static structured runs (checks, sandboxed Chromium render, geometry judges), runs/s
  with 2 workers against 1 (target >= 1.6x; 2 cores);
- I/O-bound: the same runs judged by the vision panel against a slow fake model server
  (`regua.llm.testing`, every call answered after 1 s), each worker one judge job at a time
  (REGUA_QUEUE_JUDGE_CONCURRENCY=1): runs/s with 3 workers against 1 (target >= 2.5x);
- the queue's overhead per run: submit-to-done of one run at a time on the 1-worker fleet minus
  the bare stage time (the same stages called in-process on SQLite, no queue), measured
  alternately so both see the same load (target <= 0.15 s).

Needs the loopback PostgreSQL server (REGUA_TEST_PG, default postgresql://postgres@127.0.0.1:5432/
test), moto (dev dependency) for the S3 server, bubblewrap and Debian Chromium.

    .venv/bin/python benchmarks/scale.py [--n 12] [--n-io 6] [--latency-runs 7]

It also prints the CPU time per run of every process of the fleet against the bare stages' (a
figure the machine's load does not move the way wall time does). ``--trace [--texts N]``
explains the figures instead: per run, with 1 then 2 workers, the SQL statements, commits and
S3 calls of each process, its CPU time, and each stage job's queue wait, run time and worker,
read from procrastinate's tables (see ``benchmarks/scale_trace.py``); ``--idle-s`` the same per
second of an idle fleet.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from benchmarks.scale_trace import Probe, cpu_total_s, own_cpu_s  # noqa: E402
from regua.llm.testing import FrameTruth, Reply, Request, serving, slow  # noqa: E402
from regua.settings import Settings  # noqa: E402
from service.context import ServiceContext  # noqa: E402
from service.pipeline.runner import advance  # noqa: E402
from service.pipeline.stages import STAGES  # noqa: E402
from service.pipeline.submit import Submission  # noqa: E402
from tests.helpers.api_client import JsonClient  # noqa: E402
from tests.helpers.fleet import Fleet  # noqa: E402
from tests.helpers.ports import free_port  # noqa: E402

TASK = "pelican-bicycle-structured@1"
VISION_PANEL = "pelican-bicycle-vision@1"
GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()
PG_ADMIN = os.environ.get("REGUA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
WAIT_S = 30.0
"""The longest wait one look at a run asks the API for (``GET /v1/runs/{id}?wait_s=``)."""
DEFAULTS = {"REGUA_QUEUE_STALLED_S": "30"}
"""The fleet as deployed: the test fleet's 3 s stalled-job timeout (for its fault tests) has
every worker send heartbeats and run the maintenance task ten times as often."""
MODEL_WAIT_S = 1.0
"""Seconds the fake model server waits before every answer (the I/O-bound judge call)."""


class SlowModel:
    """A vision model answering ``pass`` to every question after :data:`MODEL_WAIT_S`."""

    def __init__(self) -> None:
        """Count the calls it answers."""
        self.truth = FrameTruth(default="pass")
        self.calls = 0

    def __call__(self, request: Request) -> Reply:
        """The truth table's answer, :data:`MODEL_WAIT_S` late."""
        self.calls += 1
        return slow(MODEL_WAIT_S, self.truth(request))


def load() -> str:
    """The 1-minute load average, printed beside each figure."""
    return f"load {os.getloadavg()[0]:.1f}"


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


def throughput(client: JsonClient, n: int, tag: str, panel: str | None = None) -> float:
    """Submit ``n`` runs at once; runs per second until the last is done."""
    t0 = time.monotonic()
    ids = client.submit_batch(runs(n, tag, panel))
    wait_done(client, ids)
    return n / (time.monotonic() - t0)


def latency(client: JsonClient, k: int, tag: str) -> float:
    """Median seconds from submit to done, one run at a time."""
    times = []
    for i in range(k):
        t0 = time.monotonic()
        ids = client.submit_batch(runs(1, f"{tag}-lat{i}"))
        wait_done(client, ids)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


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


class Bare:
    """The stages of one run called in-process on SQLite (no queue, no HTTP)."""

    def __init__(self, root: Path) -> None:
        """Open a context in ``root/bare`` and warm its render pool up."""
        settings = Settings(data_dir=root / "bare", render_workers=1, queue="embedded")
        self.ctx = ServiceContext.open(settings)
        self.count = 0
        self.one()  # the render pool's cold start

    def one(self) -> float:
        """Seconds of the stages of one fresh run."""
        self.count += 1
        tag = f"{GOOD}<!-- bare {self.count} -->"
        (run_id,) = self.ctx.submit([Submission(TASK, "bench", tag)], None)
        t0 = time.monotonic()
        advance(self.ctx.db, self.ctx.blobs, self.ctx.machinery, run_id, STAGES)
        return time.monotonic() - t0

    def close(self) -> None:
        """Release the render pool."""
        self.ctx.close()


Figure = tuple[float, str]
"""A measured value and the load average when it was measured."""


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

    def grow(self, to: int) -> None:
        """Start workers until ``to`` run, and let each render pool warm up."""
        while self.workers < to:
            self.fleet.start_worker()
            self.workers += 1
        want = 2 * self.workers  # each process registers its render and judge workers (or more)
        self.fleet.wait_for(
            lambda: self.fleet.count("SELECT count(*) FROM procrastinate_workers") >= want,
            180,
            "workers registered",
        )
        throughput(self.client, 2 * self.workers, f"warm-{self.workers}")

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


def measure(args: argparse.Namespace, root: Path) -> dict[str, Figure | list[tuple[float, float]]]:
    """Every figure of the run (see the module docstring)."""
    out: dict[str, Figure | list[tuple[float, float]]] = {}
    model = SlowModel()
    with s3_bucket() as s3, serving(model) as server:
        env = {
            **s3,
            "REGUA_JUDGE_BASE_URL": server.url,
            "REGUA_JUDGE_MODEL": "slow-vision",
            "REGUA_JUDGE_API_KEY": "bench",
            "REGUA_QUEUE_JUDGE_CONCURRENCY": "1",
            **DEFAULTS,
        }
        bare = Bare(root)
        fleet = Growing(root, env)
        try:
            fleet.grow(1)
            out["cpu1"] = (throughput(fleet.client, args.n, "cpu1"), load())
            probe = fleet.probe(root / "cpu")
            bare_s = queue_s = 0.0
            pairs = []
            for i in range(args.k):
                t0 = own_cpu_s()
                b = bare.one()
                bare_s += own_cpu_s() - t0
                after_bare = probe.snapshot()
                pairs.append((b, latency(fleet.client, 1, f"lat{i}")))
                queue_s += cpu_total_s(probe.snapshot().minus(after_bare))
            out["pairs"] = pairs
            out["cpu_bare"] = (bare_s / args.k, "")
            out["cpu_queue"] = (queue_s / args.k, "")
            out["lat_load"] = (0.0, load())
            calls = model.calls
            out["io1"] = (throughput(fleet.client, args.n_io, "io1", VISION_PANEL), load())
            out["calls"] = ((model.calls - calls) / args.n_io, "")
            fleet.grow(2)
            out["cpu2"] = (throughput(fleet.client, args.n, "cpu2"), load())
            fleet.grow(3)
            out["io3"] = (throughput(fleet.client, args.n_io, "io3", VISION_PANEL), load())
        finally:
            fleet.close()
            bare.close()
    return out


def traced(args: argparse.Namespace, root: Path) -> None:
    """``--trace``: round trips, CPU per process and stage timelines per run, 1 then 2 workers."""
    from benchmarks.scale_trace import per_run, timeline, worker_names

    probe_dir = root / "probe"
    probe_dir.mkdir()
    probe_path = str(REPO / "benchmarks" / "scale_probe")
    with s3_bucket() as s3:
        env = {**s3, **DEFAULTS, "REGUA_PROBE_DIR": str(probe_dir)}
        env["PYTHONPATH"] = f"{probe_path}:{REPO}"
        if args.texts:
            env["REGUA_PROBE_SQL"] = "1"
        fleet = Growing(root, env)
        assert fleet.fleet.api is not None
        probe = Probe(probe_dir, PG_ADMIN, fleet.url.rsplit("/", 1)[1])
        probe.name(fleet.fleet.api.pid, "api")
        libpq = fleet.url.replace("+psycopg", "")
        names: dict[int, str] = {}
        try:
            for workers in (1, 2):
                fleet.grow(workers)
                proc = fleet.fleet.workers[-1]
                probe.name(proc.pid, f"worker-{workers}")
                names = worker_names(libpq, names, f"w{workers}")
                before = probe.snapshot()
                time.sleep(args.idle_s)
                diff = probe.snapshot().minus(before)
                print(f"{workers} worker(s) idle ({load()}): per second")
                print("\n".join(per_run(diff, args.idle_s, args.texts)))
                ids: list[str] = []
                before = probe.snapshot()
                for i in range(args.k):
                    ids += fleet.client.submit_batch(runs(1, f"trace{workers}-{i}"))
                    wait_done(fleet.client, ids[-1:])
                diff = probe.snapshot().minus(before)
                print(f"{workers} worker(s), one run at a time ({load()}): per run")
                print("\n".join(per_run(diff, args.k, args.texts)))
                print("\n".join(timeline(libpq, ids, names)))
                before = probe.snapshot()
                t0 = time.monotonic()
                batch = fleet.client.submit_batch(runs(args.n, f"tracebatch{workers}"))
                wait_done(fleet.client, batch)
                rate = args.n / (time.monotonic() - t0)
                diff = probe.snapshot().minus(before)
                print(f"{workers} worker(s), {args.n} runs at once: {rate:.2f} runs/s ({load()})")
                print("\n".join(per_run(diff, args.n)))
                print(timeline(libpq, batch, names)[-1])
        finally:
            fleet.close()


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=12, help="runs per CPU-bound measurement")
    parser.add_argument("--n-io", type=int, default=6, help="runs per I/O-bound measurement")
    parser.add_argument("--latency-runs", dest="k", type=int, default=7, help="overhead runs")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="instead: round trips and CPU per process per run, and stage timelines",
    )
    parser.add_argument(
        "--idle-s", type=int, default=10, help="with --trace: seconds of idle fleet measured"
    )
    parser.add_argument(
        "--texts", type=int, default=0, help="with --trace: the N most sent statements per process"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="regua-scale-") as tmp:
        if args.trace:
            traced(args, Path(tmp))
        else:
            report(measure(args, Path(tmp)))


def report(out: dict[str, Figure | list[tuple[float, float]]]) -> None:
    """Print the figures, each with its reference and the load average."""
    fig = {k: v for k, v in out.items() if isinstance(v, tuple)}
    pairs = out["pairs"]
    assert isinstance(pairs, list)
    (cpu1, l1), (cpu2, l2) = fig["cpu1"], fig["cpu2"]
    (io1, l3), (io3, l4) = fig["io1"], fig["io3"]
    print(f"cores: {os.cpu_count()}  (1 render worker per process, PostgreSQL + S3)")
    print(
        f"CPU-bound renders: 2 workers {cpu2:.2f} runs/s ({l2}) against 1 worker "
        f"{cpu1:.2f} runs/s ({l1}) = {cpu2 / cpu1:.2f}x (target 1.6x)"
    )
    print(
        f"I/O-bound judging ({fig['calls'][0]:.1f} model calls per run, {MODEL_WAIT_S:g} s each, "
        f"1 judge job per worker): 3 workers {io3:.3f} runs/s ({l4}) against 1 worker "
        f"{io1:.3f} runs/s ({l3}) = {io3 / io1:.2f}x (target 2.5x)"
    )
    bare = statistics.median(b for b, _ in pairs)
    queued = statistics.median(q for _, q in pairs)
    over = statistics.median(q - b for b, q in pairs)
    print(
        f"queue overhead per run: {over:+.3f} s = submit-to-done {queued:.3f} s on the queue "
        f"against the bare stage time {bare:.3f} s (in-process, no queue; medians of "
        f"{len(pairs)} alternating pairs, {fig['lat_load'][1]}; target <= 0.15 s)"
    )
    cpu_queue, cpu_bare = fig["cpu_queue"][0], fig["cpu_bare"][0]
    print(
        f"CPU time per run (load-independent): {cpu_queue:.3f} s on the queue (every process: "
        f"API, worker and its sandbox, PostgreSQL, moto and the client) against {cpu_bare:.3f} s "
        f"bare = {cpu_queue - cpu_bare:+.3f} s"
    )


if __name__ == "__main__":
    main()
