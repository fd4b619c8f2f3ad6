"""Render throughput: sandboxed Chromium (warm pool) beside CairoSVG and resvg, same files.

Usage::

    .venv/bin/python benchmarks/render.py [--workers N] [--repeat 2] [--limit N] [--json]

The pool runs with the service's default settings (``Settings()``: CPUs + 1 workers, recycling
after ``worker_max_jobs``), unless ``--workers`` says otherwise.

On ``../shared/corpora/llm_svgs`` (every file of ``index.csv``), in the same run:

- CairoSVG and resvg-py render every file to an 800x600 PNG, serially, in this process; CairoSVG
  also with as many processes as the pool has workers (``cairosvg xN``), since the pool uses
  every CPU too (the target ratio is against the serial run, as the issue defines it; both are
  printed);
- the sandboxed pool (bubblewrap, uid nobody, no network, per-job clean browsing state, timing
  self-test at worker start) renders every file as a static-task job (one frame, no masks), all
  workers busy. Throughput is frames per second of wall time, after a warm-up pass;
- ``--identity`` instead renders every file on the default path and on the reference path
  (``mask_path="reference"``: the instrumentation sent with every call, metrics read) and
  compares the frames byte for byte;
- cold start: the time from spawning a sandbox to the worker's ``ready`` (browser launch and
  self-test included), per worker, and the browser launch alone;
- peak memory per worker: private RSS (``RssAnon`` + ``RssShmem``) of the whole sandbox process
  tree, sampled every 0.2 s while the pool starts and warms up and during one more (untimed)
  pass after the timed ones; never during the timed passes, where its scans of ``/proc`` (~30
  CPU ms a second on this host) were counted as the pool's and took CPU from it.

CPU time per file (all processes: this one plus every sandbox's process tree) is shown beside the
throughput: on a shared, noisy machine it is the steadier measure of the work a file costs. The
pool's share is also split by process (``benchmarks/proc_cpu.py``): this process's threads
(``host-python``: the pool, the clients, the memory sampler), each sandbox's worker Python,
Playwright driver and Chromium browser, GPU, renderer and utility processes.

CairoSVG xN runs once before and once after the pool and counts as both passes together, so a
change of load between passes does not decide the ratio; the CPU per file of both pools is
compared too. Ratios > 1.0 mean the sandboxed Chromium is faster per file than the other
renderer. Worker-side time (inside the sandbox) is shown beside the end-to-end time to separate
pool overhead.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.proc_cpu import RssSampler, TreeSnapshot, cpu_by_type  # noqa: E402
from regua.settings import Settings  # noqa: E402
from sandbox import WorkerPool  # noqa: E402
from service.pipeline.render_client import RenderOutput, create_pool, render_artifact  # noqa: E402
from tasks import TaskSpec, bundled_registry  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpora" / "llm_svgs"
TASK = "pelican-bicycle-static@1"


def load_files(limit: int | None, corpus: Path = CORPUS) -> list[tuple[str, str]]:
    """``(name, text)`` of every model output listed in the corpus index."""
    with (corpus / "index.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    files = [(r["file"], (corpus / r["file"]).read_text("utf-8", "replace")) for r in rows]
    return files[:limit] if limit else files


def bench_serial(
    name: str, render_one: Any, files: list[tuple[str, str]], repeat: int
) -> dict[str, Any]:
    """Render every file ``repeat`` times in this process; failures are counted, not timed out."""
    failures = 0
    cpu = time.process_time()
    started = time.perf_counter()
    for _ in range(repeat):
        for _, text in files:
            try:
                render_one(text)
            except Exception:
                failures += 1
    elapsed = time.perf_counter() - started
    count = len(files) * repeat
    return {
        "renderer": name,
        "files": count,
        "failures": failures,
        "seconds": elapsed,
        "files_per_s": count / elapsed,
        "ms_per_file": 1000 * elapsed / count,
        "cpu_ms_per_file": 1000 * (time.process_time() - cpu) / count,
    }


def _cairo_ok(text: str) -> bool:
    try:
        cairo_one(text)
    except Exception:
        return False
    return True


def bench_cairo_pool(files: list[tuple[str, str]], workers: int, repeat: int) -> dict[str, Any]:
    """CairoSVG in ``workers`` processes (warm), every file ``repeat`` times."""
    texts = [text for _, text in files] * repeat
    with ProcessPoolExecutor(max_workers=workers) as ex:
        list(ex.map(_cairo_ok, [text for _, text in files[: 4 * workers]]))  # warm-up
        before = _tree_cpu_s(os.getpid())
        started = time.perf_counter()
        ok = list(ex.map(_cairo_ok, texts, chunksize=4))
        elapsed = time.perf_counter() - started
        cpu = _tree_cpu_s(os.getpid()) - before
    count = len(texts)
    return {
        "renderer": f"cairosvg x{workers}",
        "files": count,
        "failures": count - sum(ok),
        "seconds": elapsed,
        "files_per_s": count / elapsed,
        "ms_per_file": 1000 * elapsed / count,
        "cpu_ms_per_file": 1000 * cpu / count,
    }


def _mean_pass(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two passes of one renderer as one: files, seconds, CPU and failures summed."""
    files, seconds = first["files"] + second["files"], first["seconds"] + second["seconds"]
    cpu_ms = first["cpu_ms_per_file"] * first["files"] + second["cpu_ms_per_file"] * second["files"]
    return first | {
        "files": files,
        "seconds": seconds,
        "files_per_s": files / seconds,
        "ms_per_file": 1000 * seconds / files,
        "cpu_ms_per_file": cpu_ms / files,
        "failures": first["failures"] + second["failures"],
    }


def _tree_cpu_s(root: int) -> float:
    """User + system CPU seconds of ``root`` and all its descendants, reaped ones included.

    A reaped process's time is in its parent's ``cutime``/``cstime``: without them every
    renderer Chromium let go (a navigation to a new origin starts a new one) went uncounted.
    """
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        ticks[int(entry.name)] = sum(int(f) for f in fields[11:15])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total / tick


def cairo_one(text: str) -> bytes:
    """CairoSVG to PNG at the profile size."""
    import cairosvg

    return bytes(cairosvg.svg2png(bytestring=text.encode(), output_width=800, output_height=600))


def resvg_one(text: str) -> bytes:
    """resvg-py to PNG at the profile size."""
    import resvg_py

    return bytes(resvg_py.svg_to_bytes(svg_string=text, width=800, height=600))


def _extra(output: RenderOutput) -> dict[str, Any]:
    """What the worker reported beyond the typed log (its own timing, its browser launch)."""
    return dict(output.log.model_extra or {})


def _timed_passes(
    pool: WorkerPool, task: TaskSpec, files: list[tuple[str, str]], repeat: int
) -> tuple[list[RenderOutput], float, float, dict[str, float]]:
    """Every file ``repeat`` times, all workers busy: outcomes, wall and CPU seconds, CPU by type.

    Nothing else of the benchmark runs meanwhile (the memory sampler would cost its /proc scans).
    """
    outcomes: list[RenderOutput] = []
    cpu_before, tree_before = _tree_cpu_s(os.getpid()), TreeSnapshot()
    own_before = time.process_time()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=pool.size) as ex:
        for _ in range(repeat):
            outcomes += list(
                ex.map(lambda f: render_artifact(f[1], task, pool, masks=False), files)
            )
    elapsed = time.perf_counter() - started
    cpu = _tree_cpu_s(os.getpid()) - cpu_before
    by_type = {"host-python": time.process_time() - own_before}
    by_type.update(cpu_by_type(tree_before, TreeSnapshot()))
    return outcomes, elapsed, cpu, by_type


def _untimed_pass(pool: WorkerPool, task: TaskSpec, files: list[tuple[str, str]]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=pool.size) as ex:
        return list(ex.map(lambda f: render_artifact(f[1], task, pool, masks=False), files))


def bench_pool(files: list[tuple[str, str]], workers: int, repeat: int) -> dict[str, Any]:
    """Warm pool throughput, cold start and peak memory.

    Peak memory is sampled while the pool starts and warms up and during one more pass over
    every file after the timed passes, never during them.
    """
    task = bundled_registry().get(TASK)
    settings = Settings(render_workers=workers)  # defaults otherwise: what the service runs
    sampler = RssSampler()
    with sampler:
        started = time.perf_counter()
        pool = create_pool(settings, size=workers)
        pool_up = time.perf_counter() - started
    try:
        with sampler:
            warm = _untimed_pass(pool, task, files[: 4 * workers])
        launch_ms = sorted(
            {_extra(o)["worker"]["launch_ms"] for o in warm if "worker" in _extra(o)}
        )
        outcomes, elapsed, cpu, by_type = _timed_passes(pool, task, files, repeat)
        with sampler:
            _untimed_pass(pool, task, files)
        startup = list(pool.startup_ms)
    finally:
        pool.close()
    count = len(outcomes)
    ok = [o for o in outcomes if o.status == "ok"]
    inner = [float(_extra(o)["elapsed_ms"]) for o in ok]
    outer = [float(o.elapsed_ms or 0) for o in ok]
    return {
        "renderer": f"chromium-sandboxed x{workers}",
        "files": count,
        "failures": count - len(ok),
        "seconds": elapsed,
        "files_per_s": count / elapsed,
        "ms_per_file": 1000 * elapsed / count,
        "cpu_ms_per_file": 1000 * cpu / count,
        "cpu_busy_share": cpu / elapsed / (os.cpu_count() or 1),
        "cpu_ms_per_file_by_type": {k: 1000 * v / count for k, v in by_type.items() if v},
        "worker_ms_median": statistics.median(inner) if inner else None,
        "job_ms_median": statistics.median(outer) if outer else None,
        "job_ms_mean": statistics.fmean(outer) if outer else None,
        "worker_ms_mean": statistics.fmean(inner) if inner else None,
        "cold_start_ms": startup,
        "browser_launch_ms": launch_ms,
        "pool_start_s": pool_up,
        "peak_rss_mb_per_worker": sorted(round(v / 2**20, 1) for v in sampler.peaks.values()),
    }


def bench_identity(files: list[tuple[str, str]]) -> dict[str, Any]:
    """Frames of every file on the default path against the reference path, byte for byte."""
    task = bundled_registry().get(TASK)
    same, differ = 0, []
    with create_pool(Settings(render_workers=1), size=1) as pool:
        for name, text in files:
            fast = render_artifact(text, task, pool, masks=False)
            ref = render_artifact(text, task, pool, masks=False, mask_path="reference")
            shas = ([f.sha256 for f in fast.log.frames], [f.sha256 for f in ref.log.frames])
            if shas[0] == shas[1] and fast.status == ref.status:
                same += 1
            else:
                differ.append(name)
    return {"files": len(files), "identical": same, "differ": differ}


def _print_report(report: dict[str, Any], workers: int) -> None:
    """The figures in words, each ratio against its reference measured in the same run."""
    files, repeat, load = report["files"], report["repeat"], report["loadavg"]
    results, ratios = report["results"], report["ratios"]
    chromium = results[2]
    print(f"{files} files x {repeat}, {os.cpu_count()} CPUs, load average {load[0]:.1f}")
    for r in results:
        print(
            f"  {r['renderer']:<22} {r['files_per_s']:7.1f} files/s"
            f"  {r['ms_per_file']:7.1f} ms/file"
            f"  cpu {r['cpu_ms_per_file']:6.1f} ms/file  failures {r['failures']}"
        )
    print(
        f"  worker-side median/mean {chromium['worker_ms_median']:.1f}/"
        f"{chromium['worker_ms_mean']:.1f} ms, end-to-end job median/mean "
        f"{chromium['job_ms_median']:.1f}/{chromium['job_ms_mean']:.1f} ms"
    )
    print(
        f"  cold start per worker (ms, incl. self-test): {chromium['cold_start_ms']}; "
        "browser launch "
        f"{chromium['browser_launch_ms']} ms"
    )
    print(f"  peak RSS per worker (MB): {chromium['peak_rss_mb_per_worker']}")
    print(f"  CPUs busy during the pool run: {chromium['cpu_busy_share']:.0%}")
    by_type = chromium["cpu_ms_per_file_by_type"]
    print("  pool CPU ms/file by process: " + ", ".join(f"{k} {v:.1f}" for k, v in by_type.items()))
    print(
        f"ratio chromium/cairosvg = {ratios['chromium_vs_cairosvg']:.2f}  "
        f"chromium/resvg = {ratios['chromium_vs_resvg']:.2f}  (target >= 1.0 vs CairoSVG)"
    )
    print(
        f"ratio chromium x{workers}/cairosvg x{workers} = "
        f"{ratios['chromium_vs_cairosvg_pool']:.2f}  (same number of processes; CairoSVG: mean"
        " of a pass before and one after the pool)"
    )
    print(
        "CPU per file, cairosvg xN / chromium xN = "
        f"{ratios['cpu_cairosvg_pool_vs_chromium']:.2f}  (the figure load moves least)"
    )


def main() -> int:
    """Run the benchmark and print ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers", type=int, default=None, help="render workers (default: the service default)"
    )
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder with index.csv")
    parser.add_argument(
        "--identity", action="store_true", help="only compare frames with the reference path"
    )
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus} (pass --corpus)", file=sys.stderr)
        return 2
    files = load_files(args.limit, args.corpus)
    if args.identity:
        found = bench_identity(files)
        print(
            f"{found['identical']}/{found['files']} files: identical frames on the default and the"
            f" reference path; differ: {found['differ'] or 'none'}"
        )
        return 0 if not found["differ"] else 1
    args.workers = args.workers or Settings().render_workers
    # CairoSVG xN runs before and after the pool and counts as the mean of both passes: the
    # load of a shared machine moves between passes, and one pass on either side is not fair
    before = bench_cairo_pool(files, args.workers, args.repeat)
    results = [
        bench_serial("cairosvg", cairo_one, files, args.repeat),
        bench_serial("resvg-py", resvg_one, files, args.repeat),
        bench_pool(files, args.workers, args.repeat),
        _mean_pass(before, bench_cairo_pool(files, args.workers, args.repeat)),
    ]
    chromium = results[2]
    ratios = {
        "chromium_vs_cairosvg": chromium["files_per_s"] / results[0]["files_per_s"],
        "chromium_vs_resvg": chromium["files_per_s"] / results[1]["files_per_s"],
        "chromium_vs_cairosvg_pool": chromium["files_per_s"] / results[3]["files_per_s"],
        "cpu_cairosvg_pool_vs_chromium": results[3]["cpu_ms_per_file"]
        / chromium["cpu_ms_per_file"],
    }
    load = os.getloadavg()
    report = {
        "files": len(files),
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
        "loadavg": load,
        "results": results,
        "ratios": ratios,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print_report(report, args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
