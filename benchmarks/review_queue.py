"""Benchmark of the review queue at scale (issue 14, item 14).

``/v1/reviews/next`` at 10,000 open items, and ``POST /v1/runs`` with three reviewers polling
against the same with none, in one run.

A real server process (the API over a SQLite data folder; no executor, so the figures are the
API's and the database's, not the renderer's) answers; the benchmark seeds finished runs with
four uncertain criteria each straight into its database, queues them the way the old first
``/next`` did (one bulk transaction, timed: the "before" reference), then measures:

* ``/next`` p50/p95 at a small queue (``--small`` items) and at ``--items`` open items, and
  the ratio of the two (flat = the call does not grow with the queue) and to the 50 ms budget;
* ``POST /v1/runs`` p50/p95 alone, then while three reviewers poll ``/next`` back to back
  (the worst case of polling) and every second, and the ratios.

    .venv/bin/python benchmarks/review_queue.py [--items 10000] [--small 100] [--n 100]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sqlalchemy import insert  # noqa: E402

from regua.settings import Settings  # noqa: E402
from service.access.secret import installation_secret, open_database  # noqa: E402
from service.access.tokens import create_token  # noqa: E402
from service.review.intake import sync_queue  # noqa: E402
from service.review.policy import queue_policy  # noqa: E402
from service.server.run import free_port, wait_ready  # noqa: E402
from service.storage import (  # noqa: E402
    Artifact,
    CriterionOutcomeRow,
    Database,
    Evaluation,
    Run,
    TaskRow,
)
from service.storage.blobs import LocalBlobStore  # noqa: E402
from tasks import bundled_registry  # noqa: E402

TASK = "pelican-bicycle-structured@1"
PER_RUN = 4
BUDGET_MS = 50.0
POLL_EVERY_S = 1.0
"""A reviewer page's polling interval (the second polling figure; the first is back to back)."""
GOOD = (REPO / "samples" / "outputs" / "structured-good.svg").read_text()
SERVER = """
import sys, uvicorn
from regua.settings import load_settings
from service.context import ServiceContext
from service.server import create_app
ctx = ServiceContext.open(load_settings())
uvicorn.run(create_app(ctx), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def nearest_rank(values: list[float], q: float) -> float:
    """Percentile by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def seed_runs(db: Database, blobs: LocalBlobStore, first: int, n: int) -> None:
    """``n`` finished, pending runs whose first evaluation left four criteria uncertain."""
    task = bundled_registry().get(TASK)
    sha = blobs.put(b"\x89PNG frame stand-in")
    ids = [f"bench{i:06d}" for i in range(first, first + n)]
    evs = list(range(first + 1, first + n + 1))
    with db.write() as s:
        row = s.query(TaskRow).filter_by(ref=TASK).one_or_none()
        if row is None:
            row = TaskRow(
                ref=TASK,
                task_id=task.id,
                version=task.version,
                content_hash=task.content_hash(),
                spec=task.to_wire(),
            )
            s.add(row)
            s.flush()
        s.execute(insert(Run), [_run(r, e, row.id) for r, e in zip(ids, evs, strict=True)])
        rubric, profile = task.content_hash(), task.render.id
        s.execute(
            insert(Evaluation),
            [_evaluation(r, e, rubric, profile) for r, e in zip(ids, evs, strict=True)],
        )
        necessary = [c.id for c in task.criteria if c.kind.value == "necessary" and c.applicable]
        s.execute(
            insert(CriterionOutcomeRow),
            [_uncertain(e, c) for e in evs for c in necessary[:PER_RUN]],
        )
        s.execute(insert(Artifact), [_frame(r, sha) for r in ids])


def _run(run_id: str, evaluation_id: int, task_pk: int) -> dict[str, object]:
    return {
        "id": run_id,
        "task_ref": TASK,
        "task_pk": task_pk,
        "model_label": "m",
        "claims": 1,
        "status": "done",
        "outcome": "pending",
        "current_evaluation_id": evaluation_id,
    }


def _evaluation(run_id: str, evaluation_id: int, rubric: str, profile: str) -> dict[str, object]:
    return {
        "id": evaluation_id,
        "run_id": run_id,
        "kind": "initial",
        "task_ref": TASK,
        "outcome": "pending",
        "rubric_hash": rubric,
        "checker_version": "checks@1",
        "render_profile_id": profile,
        "judge_panel": {},
        "reasons": [],
    }


def _uncertain(evaluation_id: int, criterion: str) -> dict[str, object]:
    return {
        "evaluation_id": evaluation_id,
        "criterion": criterion,
        "kind": "necessary",
        "status": "uncertain",
        "review_required": True,
        "review_reason": "no_reliable_judge",
        "votes": [],
    }


def _frame(run_id: str, sha: str) -> dict[str, object]:
    return {
        "sha256": sha,
        "run_id": run_id,
        "kind": "frame",
        "name": "frame-0.png",
        "media_type": "image/png",
        "size": 19,
        "procedure_id": "render",
        "procedure_version": "1",
        "meta": {"time_s": 0.0},
    }


def queue_in_bulk(db: Database, settings: Settings) -> tuple[int, float]:
    """What the first ``/next`` used to do: every unscanned run queued in one transaction."""
    policy = queue_policy(settings, installation_secret(settings))
    t0 = time.perf_counter()
    with db.write() as s:
        created = sync_queue(s, policy)
    return created, time.perf_counter() - t0


def timed_get(client: httpx.Client, url: str, n: int) -> list[float]:
    """Seconds of ``n`` sequential GETs (each must answer 200)."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        resp = client.get(url)
        out.append(time.perf_counter() - t0)
        assert resp.status_code == 200, resp.text
    return out


def timed_submits(client: httpx.Client, n: int, tag: str) -> list[float]:
    """Seconds of ``n`` sequential ``POST /v1/runs`` (each must answer 201/202)."""
    out = []
    for i in range(n):
        body = {"task": TASK, "model": {"label": "bench"}, "output": GOOD + f"<!-- {tag}{i} -->"}
        t0 = time.perf_counter()
        resp = client.post("/v1/runs", json=body)
        out.append(time.perf_counter() - t0)
        assert resp.status_code in (200, 201, 202), resp.text
    return out


def poll(url: str, token: str, stop: threading.Event, seen: list[float], every_s: float) -> None:
    """A reviewer asking for the next item every ``every_s`` seconds (0: back to back)."""
    with httpx.Client(base_url=url, headers=_auth(token), timeout=60) as client:
        while not stop.is_set():
            t0 = time.perf_counter()
            client.get("/v1/reviews/next").raise_for_status()
            seen.append(time.perf_counter() - t0)
            stop.wait(max(0.0, every_s - (time.perf_counter() - t0)))


def submits_while_polling(
    url: str, tokens: dict[str, str], sub: httpx.Client, n: int, every_s: float
) -> tuple[list[float], list[float]]:
    """Submission latencies while three reviewers poll, and the reviewers' ``/next`` latencies."""
    stop, seen = threading.Event(), [list[float]() for _ in range(3)]
    pollers = [
        threading.Thread(target=poll, args=(url, tokens[f"r{i}"], stop, seen[i], every_s))
        for i in range(3)
    ]
    for t in pollers:
        t.start()
    time.sleep(1.0)
    try:
        submits = timed_submits(sub, n, f"p{every_s}-")
    finally:
        stop.set()
        for t in pollers:
            t.join(60)
    return submits, [v for lst in seen for v in lst]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(nearest_rank(values, 50) * 1000, 2),
        "p95_ms": round(nearest_rank(values, 95) * 1000, 2),
        "n": len(values),
    }


def measure(url: str, tokens: dict[str, str], n: int) -> dict[str, Any]:
    """``/next`` at the current queue, then submissions alone and with three reviewers polling."""
    out: dict[str, Any] = {}
    with httpx.Client(base_url=url, headers=_auth(tokens["r0"]), timeout=60) as rev:
        timed_get(rev, "/v1/reviews/next", 5)  # warm-up
        out["next"] = _ms(timed_get(rev, "/v1/reviews/next", n))
    with httpx.Client(base_url=url, headers=_auth(tokens["sub"]), timeout=60) as sub:
        timed_submits(sub, 5, "warm")
        out["submit_alone"] = _ms(timed_submits(sub, n, "a"))
        polled, seen = submits_while_polling(url, tokens, sub, n, 0.0)
        out["submit_polled"], out["next_while_polling"] = _ms(polled), _ms(seen)
        polled, seen = submits_while_polling(url, tokens, sub, n, POLL_EVERY_S)
        out["submit_polled_1s"], out["next_polled_1s"] = _ms(polled), _ms(seen)
    return out


def start_server(data: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The API (no executor) over ``data`` as its own process; returns it and its URL."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "REGUA_DATA_DIR": str(data)}
    env["REGUA_QUEUE_CAPACITY"] = "1000000"
    # one token submits everything: the fairness limits would measure themselves, not the queue
    env["REGUA_SUBMITTER_QUEUE_SHARE"] = "1"
    env["REGUA_SUBMIT_RATE_PER_MINUTE"] = "0"
    log = (data.parent / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)], cwd=REPO, env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, 90)
    return proc, url


def main() -> None:
    """Run the benchmark and print its figures with their references, as ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000, help="open items for the large queue")
    ap.add_argument("--small", type=int, default=100, help="open items for the reference queue")
    ap.add_argument("--n", type=int, default=100, help="requests per measurement")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="regua-bench-queue-")) / "data"
    settings = Settings(data_dir=data, queue_capacity=1_000_000)
    db = open_database(settings)
    blobs = LocalBlobStore(settings.resolved_artifact_dir())
    tokens = {f"r{i}": create_token(db, "reviewer", f"reviewer-{i}")[0] for i in range(3)}
    tokens["sub"] = create_token(db, "submitter", "bench")[0]
    small_runs, large_runs = args.small // PER_RUN, args.items // PER_RUN
    seed_runs(db, blobs, 0, small_runs)
    queue_in_bulk(db, settings)
    proc, url = start_server(data)
    try:
        small = measure(url, tokens, args.n)
        seed_runs(db, blobs, small_runs, large_runs - small_runs)
        created, bulk_s = queue_in_bulk(db, settings)
        large = measure(url, tokens, args.n)
    finally:
        proc.terminate()
        proc.wait(30)
    report(args, small, large, created, bulk_s)


def report(
    args: argparse.Namespace,
    small: dict[str, Any],
    large: dict[str, Any],
    created: int,
    bulk: float,
) -> None:
    """Print (and optionally store) the figures and their ratios."""
    n_large, n_small = large["next"]["p50_ms"], small["next"]["p50_ms"]
    alone, polled = large["submit_alone"]["p50_ms"], large["submit_polled"]["p50_ms"]
    figures = {
        "items": args.items,
        "small": args.small,
        "small_queue": small,
        "large_queue": large,
        "bulk_queue_s": round(bulk, 3),
        "bulk_items": created,
    }
    print(f"review queue: {args.items} open items (reference queue: {args.small})")
    print(
        f"  before (reference): queueing {created} items in one transaction, as the first "
        f"/next did, took {bulk:.2f} s holding the writer lock"
    )
    print(
        f"  /next p50 at {args.items}: {n_large:.1f} ms (p95 {large['next']['p95_ms']:.1f}); "
        f"at {args.small}: {n_small:.1f} ms; ratio {n_large / n_small:.2f}x; "
        f"vs the {BUDGET_MS:.0f} ms budget: {n_large / BUDGET_MS:.2f}x"
    )
    print(
        f"  /next p50 at {args.items} while 3 reviewers poll back to back: "
        f"{large['next_while_polling']['p50_ms']:.1f} ms "
        f"({large['next_while_polling']['n']} calls)"
    )
    print(
        f"  POST /v1/runs p50 at {args.items}: alone {alone:.1f} ms, with 3 reviewers polling "
        f"back to back {polled:.1f} ms; ratio {polled / alone:.2f}x (p95 "
        f"{large['submit_alone']['p95_ms']:.1f} vs "
        f"{large['submit_polled']['p95_ms']:.1f} ms)"
    )
    p1 = large["submit_polled_1s"]["p50_ms"]
    print(
        f"  POST /v1/runs p50 at {args.items} with 3 reviewers polling every {POLL_EVERY_S:.0f} s: "
        f"{p1:.1f} ms; ratio {p1 / alone:.2f}x (p95 {large['submit_polled_1s']['p95_ms']:.1f} ms)"
    )
    print(
        f"  POST /v1/runs p50 at {args.small}: alone {small['submit_alone']['p50_ms']:.1f} ms, "
        f"polled {small['submit_polled']['p50_ms']:.1f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
