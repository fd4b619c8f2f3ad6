"""The ``geometry`` judge: structured-task criteria measured on the part masks.

Every distance is divided by the wheel diameter measured on the same image, so verdicts do not
depend on resolution or drawing scale. Contacts are measured between *visible* regions: a part
that is clipped, hidden or fully covered is not visible whatever its bounding box says, and a
contact that cannot be seen is not a pass. P1 (a recognisable pelican) is not decidable from
geometry, so this judge does not answer it.

Recognition vs relations: geometry on part masks measures relations (contacts, joins, seating,
sizes); it cannot tell whether a part *looks like* what its id says (a rectangle with the id
``wheel-front`` is a wheel to the masks). A profile may therefore name criteria it answers only
as a veto (``params.veto_only``, e.g. ``["B1"]`` in ``geometry@2``): on those the judge reports
a ``fail`` it can see (a part missing, hidden, misplaced or malformed) and abstains otherwise, so
a pass needs a recognising judge's vote. ``geometry@1`` has no veto list (frozen behaviour).
Pure: decodes PNG bytes in memory, no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from judges import geometry_measure
from judges.geometry_measure import Region
from judges.geometry_memo import gap, memo_source, point_distance
from judges.geometry_motion import judge_a1, judge_a2
from judges.geometry_scene import (
    Finding,
    MaskDecodeError,
    Scene,
    Thresholds,
    band,
    not_visible_reason,
    worst,
)
from judges.inputs import JudgeInput, MaskImage
from judges.measure_memo import MeasurementMemo
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, Mode, TaskSpec

PARTS = (
    "pelican",
    "body",
    "wing-left",
    "wing-right",
    "foot-left",
    "foot-right",
    "bicycle",
    "wheel-front",
    "wheel-rear",
    "frame",
    "saddle",
    "handlebar",
    "crank",
    "pedal-left",
    "pedal-right",
)
BIKE_PARTS = (
    "wheel-front",
    "wheel-rear",
    "frame",
    "saddle",
    "handlebar",
    "crank",
    "pedal-left",
    "pedal-right",
)
STATIC_CRITERIA = ("B1", "B2", "R1", "R2", "R3")
MOTION_CRITERIA = ("A1", "A2")
_PASS, _FAIL, _UNC = VerdictStatus.PASS, VerdictStatus.FAIL, VerdictStatus.UNCERTAIN


def r2_at(scene: Scene, th: Thresholds) -> Finding:
    """R2 on one scene: each foot touches its own pedal, both contacts visible."""
    findings: list[Finding] = []
    diameter = scene.wheel_diameter
    ratios: dict[str, float | None] = {}
    for side in ("left", "right"):
        foot, pedal = f"foot-{side}", f"pedal-{side}"
        hidden = not_visible_reason(scene, foot, th) or not_visible_reason(scene, pedal, th)
        if hidden:
            findings.append(
                Finding(_FAIL, scene.ref(foot), hidden + "; the contact cannot be seen")
            )
            ratios[side] = None
            continue
        if diameter is None:
            findings.append(Finding(_UNC, scene.ref(foot), "no wheel to measure the scale"))
            continue
        g = gap(scene.visible(foot), scene.visible(pedal))
        ratio = (g or 0.0) / diameter
        ratios[side] = round(ratio, 4)
        status = band(ratio, th.contact_pass_max, th.contact_uncertain_max)
        desc = (
            f"{foot}-{pedal} gap {g:.1f}px = {ratio:.3f} of the wheel diameter ({diameter:.0f}px)"
        )
        findings.append(Finding(status, scene.ref(foot), desc))
    result = worst(findings)
    desc = result.description
    if result.status is _PASS:
        desc = (
            f"both feet touch their own pedals: gap left {ratios['left']:.3f}, right "
            f"{ratios['right']:.3f} of the wheel diameter ({diameter:.0f}px)"
        )
    return Finding(result.status, result.artifact_ref, desc, {"gap_ratio": ratios, **scene.info})


def r1_at(scene: Scene, th: Thresholds) -> Finding:
    """R1: the body sits on the saddle — touching, above it, not sunk through."""
    for part in ("body", "saddle"):
        hidden = not_visible_reason(scene, part, th)
        if hidden:
            return Finding(_FAIL, scene.ref(part), hidden)
    diameter = scene.wheel_diameter
    if diameter is None:
        return Finding(_UNC, scene.ref("body"), "no wheel to measure the scale")
    g = gap(scene.visible("body"), scene.visible("saddle")) or 0.0
    ratio = g / diameter
    body, saddle = scene.alone("body"), scene.alone("saddle")
    details: dict[str, Any] = {"gap_ratio": round(ratio, 4), **scene.info}
    if body.centroid and saddle.centroid and body.centroid[1] > saddle.centroid[1]:
        return Finding(_FAIL, scene.ref("body"), "the body is below the saddle", details)
    if body.bbox and saddle.bbox:
        sink = (body.bbox[3] - saddle.bbox[3]) / diameter
        details["sink_ratio"] = round(sink, 4)
        if sink > th.seat_sink_max:
            desc = f"the body reaches {sink:.2f} wheel diameters below the saddle (sunk through)"
            return Finding(_FAIL, scene.ref("body"), desc, details)
    status = band(ratio, th.contact_pass_max, th.contact_uncertain_max)
    desc = f"body-saddle gap {g:.1f}px = {ratio:.3f} of the wheel diameter"
    return Finding(status, scene.ref("body"), desc, details)


def r3_at(scene: Scene, th: Thresholds) -> Finding:
    """R3: at least one visible wing touches the visible handlebar."""
    hidden = not_visible_reason(scene, "handlebar", th)
    if hidden:
        return Finding(_FAIL, scene.ref("handlebar"), hidden)
    diameter = scene.wheel_diameter
    if diameter is None:
        return Finding(_UNC, scene.ref("handlebar"), "no wheel to measure the scale")
    best: tuple[float, str] | None = None
    ratios: dict[str, float | None] = {}
    for wing in ("wing-left", "wing-right"):
        if not_visible_reason(scene, wing, th):
            ratios[wing] = None
            continue
        ratio = (gap(scene.visible(wing), scene.visible("handlebar")) or 0.0) / diameter
        ratios[wing] = round(ratio, 4)
        if best is None or ratio < best[0]:
            best = (ratio, wing)
    details: dict[str, Any] = {"gap_ratio": ratios, **scene.info}
    if best is None:
        return Finding(_FAIL, scene.ref("wing-left"), "no wing is visible", details)
    status = band(best[0], th.contact_pass_max, th.contact_uncertain_max)
    desc = f"closest wing {best[1]} is {best[0]:.3f} wheel diameters from the handlebar"
    return Finding(status, scene.ref(best[1]), desc, details)


def b1_at(scene: Scene, th: Thresholds) -> Finding:
    """B1: every bicycle part present and visible; wheels round; pedals small; two wheels."""
    findings: list[Finding] = []
    for part in BIKE_PARTS:
        hidden = not_visible_reason(scene, part, th)
        if hidden:
            findings.append(Finding(_FAIL, scene.ref(part), hidden))
    diameter = scene.wheel_diameter
    details: dict[str, Any] = dict(scene.info)
    for wheel in ("wheel-front", "wheel-rear"):
        ell = scene.alone(wheel).ellipse
        if ell is None:
            continue
        details[f"{wheel}-roundness"] = round(ell.roundness, 3)
        status = band(1.0 - ell.roundness, 1.0 - th.wheel_pass_min, 1.0 - th.wheel_uncertain_min)
        desc = f"{wheel} fitted ellipse axis ratio {ell.roundness:.2f}"
        findings.append(Finding(status, scene.ref(wheel, "alone"), desc))
    front, rear = scene.alone("wheel-front").ellipse, scene.alone("wheel-rear").ellipse
    if front and rear and diameter:
        apart = ((front.cx - rear.cx) ** 2 + (front.cy - rear.cy) ** 2) ** 0.5 / diameter
        details["wheel_spacing"] = round(apart, 3)
        if apart < 0.5:
            findings.append(Finding(_FAIL, scene.ref("wheel-front"), "the two wheels overlap"))
    if diameter:
        for pedal in ("pedal-left", "pedal-right"):
            size = scene.alone(pedal).extent / diameter
            details[f"{pedal}-extent"] = round(size, 3)
            if size > th.pedal_max_extent:
                desc = f"{pedal} spans {size:.2f} wheel diameters (not a pedal beside the wheels)"
                findings.append(Finding(_FAIL, scene.ref(pedal, "alone"), desc))
    if not findings:
        return Finding(_UNC, None, "no measurable bicycle part", details)
    result = worst(findings)
    desc = result.description if result.status is not _PASS else "all bicycle parts visible"
    if result.status is _PASS:
        desc += f"; wheels round (axis ratio ≥ {th.wheel_pass_min}); pedals small"
    return Finding(result.status, result.artifact_ref, desc, details)


def b2_at(scene: Scene, th: Thresholds) -> Finding:
    """B2: the frame reaches both wheel centres and each pedal joins the crank."""
    diameter = scene.wheel_diameter
    if diameter is None:
        return Finding(_UNC, scene.ref("frame"), "no wheel to measure the scale")
    frame = scene.alone("frame")
    if not frame.pixels:
        return Finding(_FAIL, scene.ref("frame"), "frame is not drawn")
    findings: list[Finding] = []
    details: dict[str, Any] = dict(scene.info)
    for wheel in ("wheel-front", "wheel-rear"):
        ell = scene.alone(wheel).ellipse
        if ell is None:
            findings.append(Finding(_FAIL, scene.ref(wheel), f"{wheel} is not drawn"))
            continue
        ratio = (point_distance(frame, ell.cx, ell.cy) or 0.0) / diameter
        details[f"frame-to-{wheel}-centre"] = round(ratio, 4)
        status = band(ratio, th.join_pass_max, th.join_uncertain_max)
        desc = f"frame is {ratio:.3f} wheel diameters from the {wheel} centre"
        findings.append(Finding(status, scene.ref("frame", "alone"), desc))
    crank = scene.alone("crank")
    for pedal in ("pedal-left", "pedal-right"):
        g = gap(scene.alone(pedal), crank)
        if g is None:
            findings.append(Finding(_FAIL, scene.ref(pedal), f"{pedal} or crank is not drawn"))
            continue
        details[f"{pedal}-to-crank"] = round(g / diameter, 4)
        status = band(g / diameter, th.join_pass_max, th.join_uncertain_max)
        desc = f"{pedal} is {g / diameter:.3f} wheel diameters from the crank"
        findings.append(Finding(status, scene.ref(pedal, "alone"), desc))
    result = worst(findings)
    desc = result.description
    if result.status is _PASS:
        desc = "the frame reaches both wheel centres and both pedals join the crank"
    return Finding(result.status, result.artifact_ref, desc, details)


def _decode(image: MaskImage, threshold: int) -> Region:
    """Decode a mask now (the judge without a measurement memo)."""
    return geometry_measure.decode_region(image.png, threshold)


STATIC_RULES = {"B1": b1_at, "B2": b2_at, "R1": r1_at, "R2": r2_at, "R3": r3_at}


class GeometryJudge:
    """Mask geometry for the structured tasks (all 15 part ids required)."""

    def __init__(self, profile: JudgeProfile) -> None:
        """Bind the judge to ``profile`` and read its thresholds."""
        self.profile = profile
        self.thresholds = Thresholds.from_profile(profile)
        self.veto_only = frozenset(str(c) for c in profile.param("veto_only", ()) or ())
        self._cache: tuple[tuple[Any, ...], MeasurementMemo | None, list[Scene]] | None = None

    def _scenes(
        self, masks: Sequence[MaskImage], memo: MeasurementMemo | None = None
    ) -> list[Scene]:
        """Scenes for these masks, reused across the criteria of one evaluation.

        Each mask is decoded at most once. With a memo, regions read their measurements from it
        and decode only on a miss.
        """
        key = tuple((m.time_s, m.part, m.kind, m.artifact_ref, hash(m.png)) for m in masks)
        cached = self._cache
        if cached is not None and cached[0] == key and cached[1] is memo:
            return cached[2]
        source = _decode if memo is None else memo_source(memo)
        scenes = Scene.build_all(masks, self.thresholds, source)
        self._cache = (key, memo, scenes)
        return scenes

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """B1, B2, R1-R3 on structured tasks; A1, A2 on animated structured tasks."""
        if not set(PARTS) <= set(task.output.required_ids):
            return False
        if criterion.id in STATIC_CRITERIA:
            return True
        return criterion.id in MOTION_CRITERIA and task.mode is Mode.ANIMATED

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure | None:
        """Measure the criterion on the masks (first frame; every frame for A1/A2)."""
        started = time.perf_counter()
        cid = inp.criterion.id
        if cid not in STATIC_RULES and cid not in MOTION_CRITERIA:
            return None
        if not inp.masks:
            return JudgeFailure(cid, self.profile.id, "no_masks", "the render produced no masks")
        scenes = self._scenes(inp.masks, inp.measurements)
        animated = inp.task.mode is Mode.ANIMATED
        try:
            if cid == "A1":
                finding = judge_a1(scenes, self.thresholds, inp.task)
            elif cid == "A2":
                finding = judge_a2(scenes, self.thresholds, r2_at)
            else:
                finding = STATIC_RULES[cid](scenes[0], self.thresholds)
        except MaskDecodeError as exc:
            return JudgeFailure(cid, self.profile.id, "bad_mask", str(exc))
        if cid in self.veto_only and finding.status is not _FAIL:
            return None  # recognition is not geometry's to confirm: only a visible failure counts
        if finding.time_s is None and animated and cid not in MOTION_CRITERIA:
            finding = finding.at(scenes[0].time_s)
        ev = Evidence(finding.artifact_ref, finding.time_s, finding.description)
        ms = (time.perf_counter() - started) * 1000.0
        return Verdict(cid, finding.status, ev, self.profile.id, ms, details=finding.details)


def create_geometry_judge(profile: JudgeProfile, settings: Settings | None = None) -> GeometryJudge:
    """Factory registered for kind ``geometry``."""
    del settings  # JudgeFactory signature; the geometry judge needs no settings
    return GeometryJudge(profile)
