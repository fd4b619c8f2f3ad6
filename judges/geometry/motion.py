"""Geometry over time (animated structured tasks): A1 crank rotation, A2 contact held."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from judges.geometry.measure import slope, unwrap_degrees
from judges.geometry.scene import Finding, Scene, Thresholds
from judges.model import VerdictStatus
from tasks import TaskSpec
from tasks.geometry import PartPair, Relation, RelationKind

CRANK = Relation(
    criterion="A1",
    kind=RelationKind.ROTATES,
    parts=("crank",),
    pairs=(PartPair(a="pedal-left", b="pedal-right"),),
)
"""The pelican tasks' rotation relation (the default when none is given)."""

EXPECTED_REVS_PER_LOOP = 1.0
MAX_STEP_SHARE = 0.4
"""The largest share of its angle period the crank may turn between two samples.

Beyond it the direction of the turn is ambiguous (aliasing) and A1 is uncertain.
"""


def crank_angle(scene: Scene, rel: Relation = CRANK) -> tuple[float, float] | None:
    """(angle in degrees, period) of the rotating part (the crank) at one time.

    The direction from the first pair's ``a`` to its ``b`` (left to right pedal) turns with the
    part over a full 360°; without both, the part's own axis (image moments) gives the angle
    modulo 180°.
    """
    if rel.pairs:
        pair = rel.pairs[0]
        left, right = scene.alone(pair.a).centroid, scene.alone(pair.b).centroid
        if left is not None and right is not None and left != right:
            return math.degrees(math.atan2(right[1] - left[1], right[0] - left[0])), 360.0
    axis = scene.alone(rel.parts[0]).orientation_deg
    if axis is None:
        return None
    return axis, 180.0


def judge_a1(
    scenes: Sequence[Scene], th: Thresholds, task: TaskSpec, rel: Relation = CRANK
) -> Finding:
    """A1: the part (crank) turns the declared revolutions per loop across the sampled frames."""
    part = rel.parts[0]
    loop_s = task.animation.loop_s if task.animation else 4.0
    angles: list[float] = []
    times: list[float] = []
    periods: set[float] = set()
    for scene in scenes:
        measured = crank_angle(scene, rel)
        if measured is None:
            others = " and ".join(p for q in rel.pairs[:1] for p in (q.a, q.b)) or "its ends"
            return Finding(
                VerdictStatus.FAIL,
                scene.ref(part, "alone"),
                f"neither the {part} nor {others} are drawn",
                time_s=scene.time_s,
            )
        angles.append(measured[0])
        periods.add(measured[1])
        times.append(scene.time_s)
    if len(scenes) < 3:
        return Finding(VerdictStatus.UNCERTAIN, None, "fewer than 3 sampled frames")
    period = min(periods)
    if period < 360.0:
        angles = [a % 180.0 for a in angles]
    unwrapped = unwrap_degrees(angles, period)
    steps = [abs(b - a) for a, b in itertools.pairwise(unwrapped)]
    if steps and max(steps) > MAX_STEP_SHARE * period:
        desc = (
            f"the {part} moves {max(steps):.0f}° between two samples: too far to follow its turn "
            f"(period {period:g}°)"
        )
        track = {"angles_deg": [round(a, 1) for a in unwrapped], "times_s": times}
        return Finding(VerdictStatus.UNCERTAIN, scenes[-1].ref(part, "alone"), desc, track)
    rate = slope(times, unwrapped)  # degrees per second
    revs = abs(rate) * loop_s / 360.0
    expected = rel.turns_per_loop
    ratio = revs / expected
    lo, hi = th.rotation_pass
    ulo, uhi = th.rotation_uncertain
    if lo <= ratio <= hi:
        status = VerdictStatus.PASS
    elif ulo <= ratio <= uhi:
        status = VerdictStatus.UNCERTAIN
    else:
        status = VerdictStatus.FAIL
    span = f"t={times[0]:g}-{times[-1]:g}s over {len(times)} frames"
    desc = (
        f"{part} turns {revs:.2f} revolutions per {loop_s:g}s loop (expected {expected:g}; {span})"
    )
    details: dict[str, Any] = {
        "revolutions_per_loop": round(revs, 3),
        "angle_source": "pedals" if period == 360.0 else "crank axis",
        "angles_deg": [round(a, 1) for a in unwrapped],
        "times_s": times,
    }
    return Finding(status, scenes[-1].ref(part, "alone"), desc, details)


def judge_a2(
    scenes: Sequence[Scene],
    th: Thresholds,
    contact_at: Callable[[Scene, Thresholds], Finding],
    summary: str = "both feet on their pedals",
    part: str = "foot-left",
) -> Finding:
    """A2: the contacts hold at every sampled time; the first break is evidence.

    ``summary`` says what held on a pass; ``part`` is the mask cited as its evidence.
    """
    per_time: list[dict[str, Any]] = []
    first_fail: Finding | None = None
    first_unsure: Finding | None = None
    for scene in scenes:
        f = contact_at(scene, th).at(scene.time_s)
        per_time.append({"time_s": scene.time_s, "status": f.status.value, **f.details})
        if f.status is VerdictStatus.FAIL and first_fail is None:
            first_fail = f
        if f.status is VerdictStatus.UNCERTAIN and first_unsure is None:
            first_unsure = f
    details: dict[str, Any] = {"samples": per_time}
    broken = min(
        (f for f in (first_fail, first_unsure) if f is not None),
        key=lambda f: f.time_s if f.time_s is not None else 0.0,
        default=None,
    )
    if broken is not None:
        details["first_break_s"] = broken.time_s
        status = VerdictStatus.FAIL if first_fail is not None else VerdictStatus.UNCERTAIN
        desc = f"contact first breaks at t={broken.time_s:g}s: {broken.description}"
        if first_fail is not None and first_fail is not broken:
            details["first_fail_s"] = first_fail.time_s
            desc += f"; clearly lost at t={first_fail.time_s:g}s"
        return Finding(status, broken.artifact_ref, desc, details, broken.time_s)
    desc = f"{summary} at all {len(scenes)} sampled times"
    ref = scenes[0].ref(part) if scenes else None
    return Finding(VerdictStatus.PASS, ref, desc, details)
