"""The ``geometry`` judge: structured-task criteria measured on the part masks.

What it measures comes from the geometry the task declares (:mod:`tasks.geometry`: parts,
relations per criterion, reference length), so a new structured task needs no code; the pelican
tasks take their family's declaration (``tasks/families/pelican-bicycle.yaml``). Every distance
is divided by the declared reference length (the wheel diameter for pelicans) measured on the
same image, so verdicts do not depend on resolution or drawing scale. Contacts are measured
between *visible* regions: a part that is clipped, hidden or fully covered is not visible
whatever its bounding box says, and a contact that cannot be seen is not a pass. P1 (a
recognisable pelican) is not decidable from geometry, so this judge does not answer it.

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

from judges.geometry.measure import Region, decode_region
from judges.geometry.memo import memo_source
from judges.geometry.motion import judge_a1, judge_a2
from judges.geometry.rules import SCENE_RULES, contact_at
from judges.geometry.scene import Finding, MaskDecodeError, Scene, Thresholds
from judges.inputs import JudgeInput, MaskImage
from judges.measure_memo import MeasurementMemo
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict, VerdictStatus
from regua.settings import Settings
from tasks import Criterion, Mode, TaskSpec
from tasks.declared import declared_geometry, family_geometry
from tasks.geometry import GeometrySpec, Relation, RelationKind


def is_motion(rel: Relation) -> bool:
    """Whether a relation is measured across the frames of an animation."""
    return rel.kind is RelationKind.ROTATES or rel.over_time


def _pelican() -> GeometrySpec:
    spec = family_geometry("pelican-bicycle")
    if spec is None:  # pragma: no cover - the family file ships with the package
        raise RuntimeError("tasks/families/pelican-bicycle.yaml is missing")
    return spec


PELICAN = _pelican()
PARTS = tuple(p.id for p in PELICAN.parts)
BIKE_PARTS = next(r for r in PELICAN.relations if r.criterion == "B1").parts
STATIC_CRITERIA = tuple(r.criterion for r in PELICAN.relations if not is_motion(r))
MOTION_CRITERIA = tuple(r.criterion for r in PELICAN.relations if is_motion(r))
_FAIL = VerdictStatus.FAIL


def measure(rel: Relation, scenes: Sequence[Scene], th: Thresholds, task: TaskSpec) -> Finding:
    """The finding of one declared relation on the scenes of one drawing."""
    if rel.kind is RelationKind.ROTATES:
        return judge_a1(scenes, th, task, rel)
    if rel.over_time:
        first = rel.pairs[0].a if rel.pairs else rel.parts[0]
        summary = rel.summary or "every contact held"
        return judge_a2(scenes, th, lambda sc, t: contact_at(sc, rel, t), summary, first)
    return SCENE_RULES[rel.kind](scenes[0], rel, th)


def _decode(image: MaskImage, threshold: int) -> Region:
    """Decode a mask now (the judge without a measurement memo)."""
    return decode_region(image.png, threshold)


_Cached = tuple[tuple[Any, ...], MeasurementMemo | None, list[Scene], Sequence[MaskImage]]
"""Scenes of the last masks judged: content key, memo, scenes, and the masks object itself."""


class GeometryJudge:
    """Mask geometry for structured tasks: the relations the task (or its family) declares."""

    def __init__(self, profile: JudgeProfile) -> None:
        """Bind the judge to ``profile`` and read its thresholds."""
        self.profile = profile
        self.thresholds = Thresholds.from_profile(profile)
        self.veto_only = frozenset(str(c) for c in profile.param("veto_only", ()) or ())
        self._cache: _Cached | None = None
        self._geometry: tuple[TaskSpec, GeometrySpec | None] | None = None

    def _scenes(
        self, masks: Sequence[MaskImage], geo: GeometrySpec, memo: MeasurementMemo | None = None
    ) -> list[Scene]:
        """Scenes for these masks, reused across the criteria of one evaluation.

        Each mask is decoded at most once. With a memo, regions read their measurements from it
        and decode only on a miss.
        """
        cached = self._cache
        same = cached is not None and cached[1] is memo and cached[3] is masks  # one evaluation
        if same and cached is not None and cached[0][0] == geo.reference_length:
            return cached[2]
        key: tuple[Any, ...] = (geo.reference_length,)
        key += tuple((m.time_s, m.part, m.kind, m.artifact_ref, hash(m.png)) for m in masks)
        if cached is not None and cached[0] == key and cached[1] is memo:
            return cached[2]
        source = _decode if memo is None else memo_source(memo)
        scenes = Scene.build_all(masks, self.thresholds, source, geo.reference_length)
        self._cache = (key, memo, scenes, masks)
        return scenes

    def _declared(self, task: TaskSpec) -> GeometrySpec | None:
        """The task's declared geometry, looked up once per task (the criteria of a run ask)."""
        last = self._geometry
        if last is None or last[0] is not task:
            last = self._geometry = (task, declared_geometry(task))
        return last[1]

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """The criteria with a declared relation; motion relations only on animated tasks."""
        geo = self._declared(task)
        rel = None if geo is None else geo.relation(criterion.id)
        if rel is None:
            return False
        return not is_motion(rel) or task.mode is Mode.ANIMATED

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure | None:
        """Measure the criterion's relation on the masks (first frame; every frame for motion)."""
        started = time.perf_counter()
        cid = inp.criterion.id
        geo = self._declared(inp.task)
        rel = None if geo is None else geo.relation(cid)
        if geo is None or rel is None:
            return None
        if not inp.masks:
            return JudgeFailure(cid, self.profile.id, "no_masks", "the render produced no masks")
        scenes = self._scenes(inp.masks, geo, inp.measurements)
        animated = inp.task.mode is Mode.ANIMATED
        try:
            finding = measure(rel, scenes, self.thresholds, inp.task)
        except MaskDecodeError as exc:
            return JudgeFailure(cid, self.profile.id, "bad_mask", str(exc))
        if cid in self.veto_only and finding.status is not _FAIL:
            return None  # recognition is not geometry's to confirm: only a visible failure counts
        if finding.time_s is None and animated and not is_motion(rel):
            finding = finding.at(scenes[0].time_s)
        ev = Evidence(finding.artifact_ref, finding.time_s, finding.description)
        ms = (time.perf_counter() - started) * 1000.0
        return Verdict(cid, finding.status, ev, self.profile.id, ms, details=finding.details)


def create_geometry_judge(profile: JudgeProfile, settings: Settings | None = None) -> GeometryJudge:
    """Factory registered for kind ``geometry``."""
    del settings  # JudgeFactory signature; the geometry judge needs no settings
    return GeometryJudge(profile)
