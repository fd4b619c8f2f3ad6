"""Re-scoring throughput beside the original evaluation of the same runs, in the same process.

    .venv/bin/python benchmarks/rescore.py [--distinct 20] [--total 2000] [--workers N] [--json OUT]

1. ``--distinct`` structured drawings (the bundled pelican with its left foot lifted by 0, 0.5, 1,
   … % of the wheel diameter: every one renders differently) go through the real pipeline:
   checks, sandboxed Chromium render (``--workers`` workers, default the service's, as many runs
   in flight), judges with the stored gate, storage (including the measurement memo of the
   masks). That time is the *original evaluation*.
2. Re-score exactly those runs with another geometry profile (other contact bands), memo off:
   every run is judged from its stored inputs (no render): frames, masks and the stored
   measurements of those masks. Ratio 1 = original s/run ÷ re-score s/run (the target's ratio).
2b. The same with a profile that also changes the mask threshold: no stored measurement applies,
   so every mask PNG is decoded and measured again (the cold path, reported beside it).
3. Clone the runs in the database to ``--total`` (blobs shared by sha256: a batch where many runs
   share a render, like repeated samples) and re-score them all, memo on (identical stored inputs
   are judged once). Ratio 2 compares with the original s/run measured in step 1 (the clones were
   never evaluated afresh; their original cost is that of the run they copy).

Target (issue 6): re-scoring at least 20x faster than evaluating afresh.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from judges.perturbation import perturb  # noqa: E402
from regua.settings import Settings  # noqa: E402
from service.context import ServiceContext  # noqa: E402
from service.evaluation.rescore import RescoreOptions, RescoreResult, rescore  # noqa: E402
from service.pipeline.render_client import create_pool  # noqa: E402
from service.pipeline.rerender import rerenderer  # noqa: E402
from service.pipeline.runner import Machinery, advance  # noqa: E402
from service.pipeline.stages import STAGES  # noqa: E402
from service.pipeline.submit import Submission  # noqa: E402
from tasks import bundled_registry  # noqa: E402
from tests.helpers.runs import (  # noqa: E402
    STRICT_PANEL,
    STRICT_PROFILE,
    TASK,
    CountingRenderer,
    clone_run,
    grant,
    machinery,
    register_geometry_variant,
    register_strict,
)

TARGET = 20.0
REMEASURE_PROFILE = "geometry-remeasure@1"
REMEASURE_PANEL = "pelican-bicycle-remeasure@1"


def register_remeasure() -> None:
    """The strict profile with mask threshold 127 instead of 128 (measurement keys all miss)."""
    overrides = {"contact_pass_max": 0.01, "contact_uncertain_max": 0.03, "mask_threshold": 127}
    register_geometry_variant(REMEASURE_PROFILE, REMEASURE_PANEL, overrides, "mask-127 strict")


def drawings(n: int) -> list[str]:
    """``n`` distinct structured drawings (foot lifted by 0.5 % steps of the wheel diameter)."""
    task = bundled_registry().get(TASK)
    svg = (REPO / "samples" / "outputs" / "structured-good.svg").read_bytes()
    out = []
    for i in range(n):
        v = perturb(svg, "foot-off-pedal", task=task, params={"fraction": 0.005 * i}, seed=0)
        out.append(v.svg.decode())
    return out


def _original(
    ctx: ServiceContext, machine: Machinery, n: int, workers: int
) -> tuple[list[str], float]:
    """Submit ``n`` distinct drawings and run the whole pipeline on them; (run ids, seconds)."""
    ids = ctx.submit([Submission(TASK, "bench", svg) for svg in drawings(n)], None)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as ex:
        assert all(ex.map(lambda r: advance(ctx.db, ctx.blobs, machine, r, STAGES), ids))
    return ids, time.perf_counter() - t0


def _timed(
    ctx: ServiceContext, machine: Machinery, panel: str, ids: list[str] | None, memo: bool
) -> tuple[RescoreResult, float]:
    """One re-scoring batch and its wall time."""
    t0 = time.perf_counter()
    result = rescore(
        ctx.db,
        ctx.blobs,
        task_ref=TASK,
        panel_id=panel,
        run_ids=ids,
        rerender=rerenderer(ctx.db, ctx.blobs, machine),
        evaluator=ctx.evaluator,
        options=RescoreOptions(memo=memo),
    )
    return result, time.perf_counter() - t0


def _clone(ctx: ServiceContext, ids: list[str], total: int) -> None:
    """Clone the runs until ``total`` runs are stored (blobs shared by sha256)."""
    per_source = (total - len(ids)) // len(ids)
    for i, run_id in enumerate(ids):
        extra = total - len(ids) - per_source * len(ids) if i == 0 else 0
        clone_run(ctx.db, run_id, per_source + extra)


def _figures(
    ids: list[str], fresh: float, timed: dict[str, tuple[RescoreResult, float]], calls: int
) -> dict[str, Any]:
    """Every figure of the run, each ratio against the original evaluation of the same runs."""
    (distinct, re_distinct), (cold, re_cold) = timed["distinct"], timed["cold"]
    batch, re_all = timed["total"]
    per_run = fresh / len(ids)
    return {
        "original_s": round(fresh, 3),
        "original_runs_per_s": round(len(ids) / fresh, 2),
        "rescore_distinct_s": round(re_distinct, 3),
        "rescore_distinct_runs_per_s": round(len(ids) / re_distinct, 2),
        "ratio_distinct": round(per_run / (re_distinct / len(ids)), 1),
        "remeasured_distinct": distinct.remeasured,
        "rescore_remeasure_runs_per_s": round(len(ids) / re_cold, 2),
        "ratio_remeasure": round(per_run / (re_cold / len(ids)), 1),
        "remeasured_cold": cold.remeasured,
        "rescore_total_runs": len(batch.appended),
        "rescore_total_s": round(re_all, 3),
        "rescore_total_runs_per_s": round(len(batch.appended) / re_all, 1),
        "rescore_total_judged": batch.judged,
        "ratio_total": round(per_run / (re_all / len(batch.appended)), 1),
        "rendered_during_rescore": sum(len(r.rerendered) for r, _ in timed.values()),
        "render_calls_total": calls,
        "target_ratio": TARGET,
    }


def _print(result: dict[str, Any], distinct: int, workers: int) -> None:
    print(
        f"original evaluation: {distinct} runs in {result['original_s']} s "
        f"({result['original_runs_per_s']} runs/s, {workers} render workers)"
    )
    print(
        f"re-score, distinct renders, no memo: {result['rescore_distinct_runs_per_s']} runs/s "
        f"-> {result['ratio_distinct']}x faster than the original (target {TARGET}x; "
        f"{result['remeasured_distinct']} runs measured again)"
    )
    print(
        f"re-score at another mask threshold (every mask decoded and measured again): "
        f"{result['rescore_remeasure_runs_per_s']} runs/s -> {result['ratio_remeasure']}x "
        f"({result['remeasured_cold']} runs measured again)"
    )
    print(
        f"re-score, {result['rescore_total_runs']} runs ({result['rescore_total_judged']} "
        f"distinct inputs judged): {result['rescore_total_runs_per_s']} runs/s "
        f"-> {result['ratio_total']}x faster"
    )
    print(f"renders during re-scoring: {result['rendered_during_rescore']}")


def main() -> int:
    """Run the benchmark and print (and optionally write) the numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--distinct", type=int, default=20)
    ap.add_argument("--total", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=None, help="default: the service's")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    register_strict()
    register_remeasure()
    workers = args.workers or Settings().render_workers
    data = Path(tempfile.mkdtemp(prefix="regua-bench-rescore-")) / "data"
    settings = Settings(data_dir=data, database_url=None, queue_capacity=args.distinct + 10)
    pool = create_pool(settings, size=workers)
    ctx = ServiceContext.open(settings, render_pool=pool)
    grant(ctx.db, ("geometry@1", STRICT_PROFILE, REMEASURE_PROFILE))
    try:
        renderer = CountingRenderer(settings, pool)
        machine = machinery(ctx, renderer)
        ids, fresh = _original(ctx, machine, args.distinct, workers)
        timed = {
            "distinct": _timed(ctx, machine, STRICT_PANEL, ids, memo=False),
            "cold": _timed(ctx, machine, REMEASURE_PANEL, ids, memo=False),
        }
        _clone(ctx, ids, args.total)
        timed["total"] = _timed(ctx, machine, "pelican-bicycle-default@1", None, memo=True)
        result = {"distinct": args.distinct, "total": args.total}
        result |= _figures(ids, fresh, timed, renderer.calls)
    finally:
        ctx.close()
        pool.close()
    _print(result, args.distinct, workers)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
