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

    .venv/bin/python benchmarks/scale.py [--n 12] [--n-io 6] [--latency-runs 7] [--overhead-only]

It also prints the CPU time per run of every process of the fleet against the bare stages' (a
figure the machine's load does not move the way wall time does). ``--trace [--texts N]``
explains the figures instead: per run, with 1 then 2 workers, the SQL statements, commits and
S3 calls of each process, its CPU time, and each stage job's queue wait, run time and worker,
read from procrastinate's tables (see ``benchmarks/scale_trace.py``); ``--idle-s`` the same per
second of an idle fleet. ``--io-timeline`` also prints each stage job of the two I/O-bound
batches (queue wait, run time, worker process).

A grown fleet is measured only once every new process is ready: all its procrastinate workers
registered (one per lane) and a run rendered by it (its render pool started, see
``benchmarks/scale_fleet.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.scale_fleet import (  # noqa: E402
    GOOD,
    PG_ADMIN,
    TASK,
    Growing,
    runs,
    s3_bucket,
    throughput,
    wait_done,
)
from benchmarks.scale_trace import Probe, cpu_total_s, own_cpu_s  # noqa: E402
from regua.llm.testing import FrameTruth, Reply, Request, serving, slow  # noqa: E402
from regua.settings import Settings  # noqa: E402
from service.context import ServiceContext  # noqa: E402
from service.pipeline.runner import advance  # noqa: E402
from service.pipeline.stages import STAGES  # noqa: E402
from service.pipeline.submit import Submission  # noqa: E402
from tests.helpers.api_client import JsonClient  # noqa: E402

VISION_PANEL = "pelican-bicycle-vision@1"
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


def latency(client: JsonClient, k: int, tag: str) -> float:
    """Median seconds from submit to done, one run at a time."""
    times = []
    for i in range(k):
        t0 = time.monotonic()
        ids = client.submit_batch(runs(1, f"{tag}-lat{i}"))
        wait_done(client, ids)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


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
            if not args.overhead_only:
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
            if args.overhead_only:
                return out
            calls = model.calls
            io1: list[str] = []
            out["io1"] = (throughput(fleet.client, args.n_io, "io1", VISION_PANEL, io1), load())
            out["calls"] = ((model.calls - calls) / args.n_io, "")
            fleet.grow(2)
            out["cpu2"] = (throughput(fleet.client, args.n, "cpu2"), load())
            fleet.grow(3)
            io3: list[str] = []
            out["io3"] = (throughput(fleet.client, args.n_io, "io3", VISION_PANEL, io3), load())
            if args.io_timeline:
                io_timelines(fleet.url.replace("+psycopg", ""), fleet.names, io1, io3)
        finally:
            fleet.close()
            bare.close()
    return out


def io_timelines(libpq: str, names: dict[int, str], io1: list[str], io3: list[str]) -> None:
    """``--io-timeline``: each stage job of the I/O-bound batches, its wait, run time and worker."""
    from benchmarks.scale_trace import timeline

    for label, ids in (("1 worker", io1), ("3 workers", io3)):
        print(f"I/O-bound batch, {label}: per run, stage@ms after submit, wait / run ms [worker]")
        print("\n".join(timeline(libpq, ids, names)))


def traced(args: argparse.Namespace, root: Path) -> None:
    """``--trace``: round trips, CPU per process and stage timelines per run, 1 then 2 workers."""
    from benchmarks.scale_trace import per_run, timeline

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
        try:
            for workers in (1, 2):
                fleet.grow(workers)
                proc = fleet.fleet.workers[-1]
                probe.name(proc.pid, f"worker-{workers}")
                names = fleet.names
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
        "--overhead-only",
        action="store_true",
        help="only the queue's overhead per run (and the CPU time per run)",
    )
    parser.add_argument(
        "--io-timeline",
        action="store_true",
        help="also: the stage jobs of the I/O-bound batches (wait, run time, worker)",
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
    print(f"cores: {os.cpu_count()}  (1 render worker per process, PostgreSQL + S3)")
    if "cpu2" in fig:
        scaling(fig)
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


def scaling(fig: dict[str, Figure]) -> None:
    """Print the CPU-bound and I/O-bound scaling figures."""
    (cpu1, l1), (cpu2, l2) = fig["cpu1"], fig["cpu2"]
    (io1, l3), (io3, l4) = fig["io1"], fig["io3"]
    print(
        f"CPU-bound renders: 2 workers {cpu2:.2f} runs/s ({l2}) against 1 worker "
        f"{cpu1:.2f} runs/s ({l1}) = {cpu2 / cpu1:.2f}x (target 1.6x)"
    )
    print(
        f"I/O-bound judging ({fig['calls'][0]:.1f} model calls per run, {MODEL_WAIT_S:g} s each, "
        f"1 judge job per worker): 3 workers {io3:.3f} runs/s ({l4}) against 1 worker "
        f"{io1:.3f} runs/s ({l3}) = {io3 / io1:.2f}x (target 2.5x)"
    )


if __name__ == "__main__":
    main()
