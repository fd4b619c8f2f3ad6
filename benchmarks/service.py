"""Load test of the service: N submissions from C concurrent clients against a real `regua serve`.

Reports accepted/second, p50/p95/p99 submit latency (nearest rank), end-to-end runs/second, and the
service's overhead over calling the sandboxed render pool directly on the same files in the same
run (target: overhead <= 25%).

    .venv/bin/python benchmarks/service.py [--n 500] [--clients 20] [--workers 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.api.client import read_token  # noqa: E402
from service.server.run import free_port, wait_ready  # noqa: E402

TASK = "pelican-bicycle-structured@1"
SAMPLE_FILES = (
    "structured-good.svg",
    "structured-good-2.svg",
    "good-in-prose.txt",
    "fail-R2-foot-off-pedal.svg",
    "fail-B2-frame-detached.svg",
    "fail-R3-wing-off-handlebar.svg",
)


def nearest_rank(values: list[float], q: float) -> float:
    """Percentile by the nearest-rank method."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def outputs(n: int) -> list[str]:
    """N distinct replies cycling over SVG-bearing samples (every one is rendered)."""
    folder = REPO / "samples" / "outputs"
    texts = [(folder / name).read_text() for name in SAMPLE_FILES]
    return [texts[i % len(texts)] + f"\n<!-- bench {i} -->\n" for i in range(n)]


def _start(data: Path, workers: int, capacity: int) -> tuple[subprocess.Popen[bytes], str]:
    """``regua serve`` on a free port with its own data folder; returns it and its URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
    cmd += ["--data-dir", str(data)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "REGUA_RENDER_WORKERS": str(workers)}
    env["REGUA_QUEUE_CAPACITY"] = str(max(1000, capacity))
    # one token submits everything: measure the service, not the per-token fairness limits
    env["REGUA_SUBMITTER_QUEUE_SHARE"] = "1"
    env["REGUA_SUBMIT_RATE_PER_MINUTE"] = "0"
    with (data / "serve.log").open("wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, 90)
    return proc, url


class _Submitter:
    """Submits replies over HTTP, retrying 429 after ``Retry-After``, and keeps latencies."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url, self.headers = url, headers
        self.latencies: list[float] = []
        self.run_ids: list[str] = []
        self.retries = 0
        self.lock = threading.Lock()

    def __call__(self, chunk: list[str]) -> None:
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=120) as http:
            for i, text in enumerate(chunk):
                body = {"task": TASK, "model": {"label": f"bench-{i % 4}"}, "output": text}
                while True:
                    t0 = time.perf_counter()
                    r = http.post("/v1/runs", json=body)
                    dt = time.perf_counter() - t0
                    if r.status_code == 429:
                        with self.lock:
                            self.retries += 1
                        time.sleep(float(r.headers.get("Retry-After", "1")))
                        continue
                    r.raise_for_status()
                    with self.lock:
                        self.latencies.append(dt)
                        self.run_ids.append(r.json()["run_id"])
                    break


def _outcomes(http: httpx.Client, runs: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for offset in range(0, runs, 1000):
        page = http.get("/v1/runs", params={"limit": 1000, "offset": offset}).json()["runs"]
        for run in page:
            counts[str(run["outcome"])] = counts.get(str(run["outcome"]), 0) + 1
    return counts


def run_service(replies: list[str], clients: int, workers: int) -> dict[str, Any]:
    """Submit every reply over HTTP from `clients` threads and wait until all runs are done."""
    data = Path(tempfile.mkdtemp(prefix="regua-bench-"))
    proc, url = _start(data, workers, len(replies))
    try:
        submit = _Submitter(url, {"Authorization": f"Bearer {read_token(data)}"})
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(submit, [replies[i::clients] for i in range(clients)]))
        accepted_s = time.perf_counter() - start
        with httpx.Client(base_url=url, headers=submit.headers, timeout=60) as http:
            while http.get("/v1/health").json()["queue_depth"] > 0:
                time.sleep(0.2)
            e2e_s = time.perf_counter() - start
            outcomes = _outcomes(http, len(submit.run_ids))
        lat = submit.latencies
        return {
            "submissions": len(lat),
            "clients": clients,
            "accept_wall_s": round(accepted_s, 3),
            "accepted_per_s": round(len(lat) / accepted_s, 1),
            "submit_latency_ms": {
                f"p{q}": round(nearest_rank(lat, q) * 1000, 1) for q in (50, 95, 99)
            },
            "retries_429": submit.retries,
            "end_to_end_s": round(e2e_s, 2),
            "end_to_end_runs_per_s": round(len(submit.run_ids) / e2e_s, 3),
            "outcomes": outcomes,
            "data_dir": str(data),
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def run_direct(replies: list[str], workers: int) -> dict[str, Any]:
    """Render the same extracted SVGs straight through a render pool of the same size."""
    import checks
    from regua.settings import Settings
    from service.pipeline import render_client as rendering
    from tasks import bundled_registry

    task = bundled_registry().get(TASK)
    svgs = [checks.extract_svg(r).svg_text or "" for r in replies]
    start = time.perf_counter()
    pool = rendering.create_pool(Settings(render_workers=workers))
    try:
        with ThreadPoolExecutor(workers * 2) as ex:
            outs = list(ex.map(lambda svg: rendering.render_artifact(svg, task, pool), svgs))
    finally:
        pool.close()
    wall = time.perf_counter() - start
    ok = sum(1 for o in outs if o.status == "ok")
    return {
        "renders": len(svgs),
        "ok": ok,
        "wall_s": round(wall, 2),
        "runs_per_s": round(len(svgs) / wall, 3),
    }


def main() -> None:
    """Run both phases and print one JSON document."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-direct", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    replies = outputs(args.n)
    service = run_service(replies, args.clients, args.workers)
    report: dict[str, Any] = {"service": service}
    if not args.skip_direct:
        direct = run_direct(replies, args.workers)
        report["direct_render_pool"] = direct
        overhead = service["end_to_end_s"] / direct["wall_s"] - 1.0
        report["overhead_pct"] = round(overhead * 100, 1)
        report["target_met"] = overhead <= 0.25
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
