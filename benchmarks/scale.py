"""Scale-out benchmark: runs/second with 1, 2 and 3 workers beside the embedded default.

The workers are `regua worker` processes on one PostgreSQL database and one S3 bucket behind
`regua serve --no-worker`; the embedded default is `regua serve` (SQLite, local artifacts,
in-process executor); all in the same run. Also the queue's overhead per run against the bare
stage time (the same stages called in-process on one run at a time, no queue).

Needs the loopback PostgreSQL server (REGUA_TEST_PG, default postgresql://postgres@127.0.0.1:5432/
test), moto (dev dependency) for the S3 server, bubblewrap and Debian Chromium.

    .venv/bin/python benchmarks/scale.py [--n 16] [--latency-runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from regua.settings import Settings  # noqa: E402
from service.api.client import read_token  # noqa: E402
from service.context import ServiceContext  # noqa: E402
from service.pipeline.runner import advance  # noqa: E402
from service.pipeline.stages import STAGES  # noqa: E402
from service.pipeline.submit import Submission  # noqa: E402
from service.server.run import free_port, wait_ready  # noqa: E402
from tests.helpers.api_client import JsonClient  # noqa: E402
from tests.helpers.fleet import Fleet  # noqa: E402

TASK = "pelican-bicycle-structured@1"
GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()
PG_ADMIN = os.environ.get("REGUA_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def runs(n: int, tag: str) -> list[dict[str, object]]:
    """``n`` distinct submissions (distinct bytes, the same drawing)."""
    return [
        {"task": TASK, "model": {"label": "bench"}, "output": f"{GOOD}<!-- {tag} {i} -->"}
        for i in range(n)
    ]


def wait_done(client: JsonClient, ids: list[str], timeout_s: float = 900) -> None:
    """Poll until every run is done."""
    deadline = time.monotonic() + timeout_s
    pending = set(ids)
    while pending and time.monotonic() < deadline:
        pending = {i for i in pending if client.run(i)["status"] != "done"}
        if pending:
            time.sleep(0.05)
    if pending:
        raise SystemExit(f"{len(pending)} runs not done after {timeout_s}s")


def throughput(client: JsonClient, n: int, tag: str) -> float:
    """Submit ``n`` runs at once; runs per second until the last is done."""
    t0 = time.monotonic()
    ids = client.submit_batch(runs(n, tag))
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


def embedded(root: Path, n: int, k: int) -> tuple[float, float]:
    """The embedded default: one `regua serve` with SQLite and local artifacts."""
    port = free_port()
    data = root / "embedded"
    env = {**os.environ, "PYTHONPATH": str(REPO), "REGUA_RENDER_WORKERS": "1"}
    env.update({"REGUA_SUBMIT_RATE_PER_MINUTE": "0", "REGUA_QUEUE": "embedded"})
    env.pop("REGUA_DATABASE_URL", None)
    cmd = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
    log = (root / "embedded.log").open("wb")
    proc = subprocess.Popen(
        [*cmd, "--data-dir", str(data)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", 90)
        with JsonClient(f"http://127.0.0.1:{port}", read_token(data)) as client:
            latency(client, 1, "warm-emb")  # the render pool's cold start
            lat = latency(client, k, "emb")
            return throughput(client, n, "emb"), lat
    finally:
        proc.terminate()
        proc.wait(60)


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


def fleet(
    root: Path, s3: dict[str, str], workers: int, n: int, k: int, bare: Bare
) -> tuple[float, list[tuple[float, float]]]:
    """`regua serve --no-worker` plus ``workers`` workers on a fresh database.

    Returns runs/s and, with one worker, ``k`` pairs (bare stage time, queued submit-to-done)
    measured alternately, one run at a time, so both see the same machine load.
    """
    url = pg_database()
    f = Fleet(root / f"fleet-{workers}", url, s3)
    f.root.mkdir(parents=True)
    try:
        f.start_api()
        for _ in range(workers):
            f.start_worker()
        f.wait_for(
            lambda: f.count("SELECT count(*) FROM procrastinate_workers") >= 2 * workers,
            120,
            "workers registered",
        )
        with f.client() as client:
            latency(client, workers, f"warm-{workers}")  # each worker's render pool warms up
            pairs = []
            if workers == 1:
                pairs = [(bare.one(), latency(client, 1, f"q1-{i}")) for i in range(k)]
            return throughput(client, n, f"q{workers}"), pairs
    finally:
        f.close()
        drop_database(url)


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


def main() -> None:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=16, help="runs per throughput measurement")
    parser.add_argument("--latency-runs", type=int, default=5, help="runs for the overhead")
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"})
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    import boto3

    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="regua-scale")
    s3 = {"REGUA_ARTIFACTS_URL": "s3://regua-scale/runs", "REGUA_S3_ENDPOINT_URL": endpoint}
    with tempfile.TemporaryDirectory(prefix="regua-scale-") as tmp:
        root = Path(tmp)
        emb, emb_lat = embedded(root, args.n, args.latency_runs)
        bare = Bare(root)
        try:
            results = {w: fleet(root, s3, w, args.n, args.latency_runs, bare) for w in (1, 2, 3)}
        finally:
            bare.close()
    moto.stop()
    report(args.n, emb, emb_lat, results)


def report(
    n: int, emb: float, emb_lat: float, results: dict[int, tuple[float, list[tuple[float, float]]]]
) -> None:
    """Print the figures."""
    print(f"cores: {os.cpu_count()}  runs per measurement: {n}  (1 render worker each)")
    print(f"embedded (SQLite, local files, in-process): {emb:.2f} runs/s")
    one = results[1][0]
    for w, (rate, _) in results.items():
        print(
            f"queue, {w} worker(s) (PostgreSQL + S3): {rate:.2f} runs/s "
            f"= {rate / emb:.2f}x embedded, {rate / one:.2f}x one worker"
        )
    print(f"ratios 1:2:3 workers = 1.00 : {results[2][0] / one:.2f} : {results[3][0] / one:.2f}")
    pairs = results[1][1]
    bare = statistics.median(b for b, _ in pairs)
    queued = statistics.median(q for _, q in pairs)
    over = statistics.median(q - b for b, q in pairs)
    print(f"bare stage time per run (in-process, no queue): {bare:.3f} s (median of {len(pairs)})")
    print(f"submit-to-done, one run at a time: queue {queued:.3f} s, embedded {emb_lat:.3f} s")
    print(
        f"queue overhead per run (HTTP submit + 4 jobs + S3 + polling): {over:+.3f} s "
        f"({over / bare:+.0%} of the bare stage time)"
    )


if __name__ == "__main__":
    main()
