"""Animated render cost: the bundled animated sample, fast path against the reference path.

Usage::

    .venv/bin/python benchmarks/render_animated.py [--repeat 3] [--json]

``samples/outputs/animated-pedalling.svg`` on ``pelican-bicycle-animated@1`` (37 timestamps, 15
parts: 1,110 masks) is rendered through one warm sandboxed worker, alternating the default path
and ``mask_path="reference"`` (the mask passes as they were before the fast path: one ``seek``
per timestamp, Pillow decode, per-part 24-bit comparisons, every mask encoded, no reuse of equal
animated states), ``--repeat`` times each, in the same run. Printed per path: the job's CPU time
(the whole sandbox's process tree, as the render budget counts it), its wall time, the CPU time
per timestamp and per captured frame, the share of the task's CPU budget, and the ratio of the
reference's CPU time to the fast path's. Frames and masks of both paths are compared byte for
byte. The load average is printed beside the figures (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from regua.settings import Settings  # noqa: E402
from service.pipeline.render_client import RenderOutput, create_pool, render_artifact  # noqa: E402
from tasks import bundled_registry  # noqa: E402

SAMPLE = ROOT / "samples" / "outputs" / "animated-pedalling.svg"
TASK = "pelican-bicycle-animated@1"


def _row(out: RenderOutput) -> dict[str, Any]:
    extra = dict(out.log.model_extra or {})
    reuse = extra.get("frame_reuse") or {"captured": len(out.log.frames), "reused": 0}
    return {
        "status": out.status,
        "cpu_s": (out.cpu_ms or 0.0) / 1000,
        "wall_s": (out.log.wall_ms or 0.0) / 1000,
        "frames": len(out.log.frames),
        "masks": len(out.log.masks),
        "captured": reuse["captured"],
        "frames_sha": [f.sha256 for f in out.log.frames],
        "masks_sha": [m.sha256 for m in out.log.masks],
    }


def run(repeat: int) -> dict[str, Any]:
    """Render the sample ``repeat`` times on each path (alternating); returns every figure."""
    task = bundled_registry().get(TASK)
    svg = SAMPLE.read_text()
    settings = Settings(render_workers=1)
    rows: dict[str, list[dict[str, Any]]] = {"fast": [], "reference": []}
    with create_pool(settings, size=1) as pool:
        render_artifact(svg, task, pool)  # warm: context, shell, caches
        for _ in range(repeat):
            for path in ("reference", "fast"):
                mask_path = "reference" if path == "reference" else None
                rows[path].append(_row(render_artifact(svg, task, pool, mask_path=mask_path)))
    budget = task.output.max_render_cpu_s
    summary: dict[str, Any] = {"budget_s": budget, "repeat": repeat, "loadavg": os.getloadavg()}
    for path, items in rows.items():
        cpu = statistics.median(r["cpu_s"] for r in items)
        summary[path] = {
            "cpu_s": cpu,
            "wall_s": statistics.median(r["wall_s"] for r in items),
            "cpu_ms_per_timestamp": 1000 * cpu / items[0]["frames"],
            "cpu_ms_per_captured_frame": 1000 * cpu / items[0]["captured"],
            "captured": items[0]["captured"],
            "frames": items[0]["frames"],
            "masks": items[0]["masks"],
            "budget_share": cpu / budget,
            "statuses": sorted({r["status"] for r in items}),
        }
    fast, ref = rows["fast"], rows["reference"]
    summary["identical"] = all(
        f["frames_sha"] == r["frames_sha"] and f["masks_sha"] == r["masks_sha"]
        for f, r in zip(fast, ref, strict=True)
    )
    summary["ratio_cpu"] = summary["reference"]["cpu_s"] / summary["fast"]["cpu_s"]
    summary["ratio_wall"] = summary["reference"]["wall_s"] / summary["fast"]["wall_s"]
    return summary


def main() -> int:
    """Run the benchmark and print its figures beside the in-run reference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    summary = run(args.repeat)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    load = summary["loadavg"]
    print(f"{SAMPLE.name} on {TASK}, {args.repeat} runs per path, load average {load[0]:.1f}")
    for path in ("reference", "fast"):
        s = summary[path]
        print(
            f"  {path:<9} cpu {s['cpu_s']:6.2f} s  wall {s['wall_s']:6.2f} s  "
            f"{s['frames']} timestamps ({s['captured']} captured), {s['masks']} masks; "
            f"{s['cpu_ms_per_timestamp']:.0f} CPU ms per timestamp, "
            f"{s['cpu_ms_per_captured_frame']:.0f} per captured frame; "
            f"{s['budget_share']:.0%} of the {summary['budget_s']:g} s budget {s['statuses']}"
        )
    print(
        f"ratio reference/fast: cpu {summary['ratio_cpu']:.2f}x, wall {summary['ratio_wall']:.2f}x"
        f"  (target >= 4x); frames and masks identical: {summary['identical']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
