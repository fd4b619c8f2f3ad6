"""The geometry rules of each declared relation kind, measured on one scene.

Every rule reads the relation a task declares (:class:`tasks.geometry.Relation`) and measures it
on the part masks of one :class:`~judges.geometry.scene.Scene`; distances are fractions of the
scene's reference length. Rules are registered by kind, so a new kind is a new entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from judges.geometry.memo import gap, point_distance
from judges.geometry.scene import Finding, Scene, Thresholds, band, not_visible_reason, worst
from judges.model import VerdictStatus
from tasks.geometry import PartPair, Relation, RelationKind

_PASS, _FAIL, _UNC = VerdictStatus.PASS, VerdictStatus.FAIL, VerdictStatus.UNCERTAIN

SceneRule = Callable[[Scene, Relation, Thresholds], Finding]


def _pair_hidden(scene: Scene, pair: PartPair, th: Thresholds) -> str | None:
    return not_visible_reason(scene, pair.a, th) or not_visible_reason(scene, pair.b, th)


def _contact_all(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """Every pair touches, each contact visible."""
    findings: list[Finding] = []
    d = scene.scale
    ratios: dict[str, float | None] = {}
    for pair in rel.pairs:
        hidden = _pair_hidden(scene, pair, th)
        if hidden:
            desc = hidden + "; the contact cannot be seen"
            findings.append(Finding(_FAIL, scene.ref(pair.a), desc))
            ratios[pair.name] = None
            continue
        if d is None:
            findings.append(Finding(_UNC, scene.ref(pair.a), f"no {scene.unit} to measure"))
            continue
        g = gap(scene.visible(pair.a), scene.visible(pair.b))
        ratio = (g or 0.0) / d
        ratios[pair.name] = round(ratio, 4)
        status = band(ratio, th.contact_pass_max, th.contact_uncertain_max)
        desc = f"{pair.a}-{pair.b} gap {g:.1f}px = {ratio:.3f} of the {scene.unit} ({d:.0f}px)"
        findings.append(Finding(status, scene.ref(pair.a), desc))
    result = worst(findings)
    desc = result.description
    if result.status is _PASS and d is not None:
        gaps = ", ".join(f"{name} {r:.3f}" for name, r in ratios.items() if r is not None)
        desc = f"{rel.summary or 'every pair touches'}: gap {gaps} of the {scene.unit} ({d:.0f}px)"
    return Finding(result.status, result.artifact_ref, desc, {"gap_ratio": ratios, **scene.info})


def _contact_any(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """At least one pair touches, visibly; a part every pair shares must be visible."""
    shared = [
        p for p in (rel.pairs[0].a, rel.pairs[0].b) if all(p in (q.a, q.b) for q in rel.pairs)
    ]
    for part in shared:
        hidden = not_visible_reason(scene, part, th)
        if hidden:
            return Finding(_FAIL, scene.ref(part), hidden)
    anchor = shared[0] if shared else rel.pairs[0].a
    d = scene.scale
    if d is None:
        return Finding(_UNC, scene.ref(anchor), f"no {scene.unit} to measure")
    best: tuple[float, PartPair] | None = None
    ratios: dict[str, float | None] = {}
    for pair in rel.pairs:
        if _pair_hidden(scene, pair, th):
            ratios[pair.name] = None
            continue
        ratio = (gap(scene.visible(pair.a), scene.visible(pair.b)) or 0.0) / d
        ratios[pair.name] = round(ratio, 4)
        if best is None or ratio < best[0]:
            best = (ratio, pair)
    details: dict[str, Any] = {"gap_ratio": ratios, **scene.info}
    if best is None:
        names = ", ".join(p.name for p in rel.pairs)
        return Finding(_FAIL, scene.ref(rel.pairs[0].a), f"no pair is visible ({names})", details)
    status = band(best[0], th.contact_pass_max, th.contact_uncertain_max)
    desc = f"closest: {best[1].a} is {best[0]:.3f} {scene.unit}s from {best[1].b}"
    return Finding(status, scene.ref(best[1].a), desc, details)


def contact_at(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """A contact relation on one scene (``all`` pairs or ``any`` pair)."""
    return (_contact_any if rel.quantifier == "any" else _contact_all)(scene, rel, th)


def _seated_pair(scene: Scene, pair: PartPair, th: Thresholds) -> Finding:
    a, b = pair.a, pair.b
    for part in (a, b):
        hidden = not_visible_reason(scene, part, th)
        if hidden:
            return Finding(_FAIL, scene.ref(part), hidden)
    d = scene.scale
    if d is None:
        return Finding(_UNC, scene.ref(a), f"no {scene.unit} to measure")
    g = gap(scene.visible(a), scene.visible(b)) or 0.0
    ratio = g / d
    top, seat = scene.alone(a), scene.alone(b)
    details: dict[str, Any] = {"gap_ratio": round(ratio, 4), **scene.info}
    if top.centroid and seat.centroid and top.centroid[1] > seat.centroid[1]:
        return Finding(_FAIL, scene.ref(a), f"the {a} is below the {b}", details)
    if top.bbox and seat.bbox:
        sink = (top.bbox[3] - seat.bbox[3]) / d
        details["sink_ratio"] = round(sink, 4)
        if sink > th.seat_sink_max:
            desc = f"the {a} reaches {sink:.2f} {scene.unit}s below the {b} (sunk through)"
            return Finding(_FAIL, scene.ref(a), desc, details)
    status = band(ratio, th.contact_pass_max, th.contact_uncertain_max)
    desc = f"{a}-{b} gap {g:.1f}px = {ratio:.3f} of the {scene.unit}"
    return Finding(status, scene.ref(a), desc, details)


def seated_at(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """Each ``a`` rests on its ``b``: touching, above it, not sunk through it."""
    return worst([_seated_pair(scene, pair, th) for pair in rel.pairs])


def _join(
    scene: Scene, pair: PartPair, th: Thresholds, d: float, details: dict[str, Any]
) -> Finding:
    a = scene.alone(pair.a)
    if pair.to == "centre":
        if not a.pixels:
            return Finding(_FAIL, scene.ref(pair.a), f"{pair.a} is not drawn")
        ell = scene.alone(pair.b).ellipse
        if ell is None:
            return Finding(_FAIL, scene.ref(pair.b), f"{pair.b} is not drawn")
        ratio = (point_distance(a, ell.cx, ell.cy) or 0.0) / d
        details[f"{pair.a}-to-{pair.b}-centre"] = round(ratio, 4)
        desc = f"{pair.a} is {ratio:.3f} {scene.unit}s from the {pair.b} centre"
    else:
        g = gap(a, scene.alone(pair.b))
        if g is None:
            return Finding(_FAIL, scene.ref(pair.a), f"{pair.a} or {pair.b} is not drawn")
        ratio = g / d
        details[f"{pair.a}-to-{pair.b}"] = round(ratio, 4)
        desc = f"{pair.a} is {ratio:.3f} {scene.unit}s from the {pair.b}"
    status = band(ratio, th.join_pass_max, th.join_uncertain_max)
    return Finding(status, scene.ref(pair.a, "alone"), desc)


def joined_at(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """Each ``a`` reaches its ``b`` (or ``b``'s centre), measured on the parts drawn alone."""
    d = scene.scale
    if d is None:
        return Finding(_UNC, scene.ref(rel.pairs[0].a), f"no {scene.unit} to measure")
    details: dict[str, Any] = dict(scene.info)
    result = worst([_join(scene, pair, th, d, details) for pair in rel.pairs])
    desc = result.description
    if result.status is _PASS:
        desc = rel.summary or "every declared join holds"
    return Finding(result.status, result.artifact_ref, desc, details)


def _shape_findings(
    scene: Scene, rel: Relation, th: Thresholds, details: dict[str, Any]
) -> list[Finding]:
    """Roundness of ``round`` parts, distance of ``apart`` pairs, size of ``small`` parts."""
    findings: list[Finding] = []
    d = scene.scale
    for part in rel.round:
        ell = scene.alone(part).ellipse
        if ell is None:
            continue
        details[f"{part}-roundness"] = round(ell.roundness, 3)
        status = band(1.0 - ell.roundness, 1.0 - th.wheel_pass_min, 1.0 - th.wheel_uncertain_min)
        desc = f"{part} fitted ellipse axis ratio {ell.roundness:.2f}"
        findings.append(Finding(status, scene.ref(part, "alone"), desc))
    for pair in rel.apart:
        one, two = scene.alone(pair.a).ellipse, scene.alone(pair.b).ellipse
        if one and two and d:
            apart = ((one.cx - two.cx) ** 2 + (one.cy - two.cy) ** 2) ** 0.5 / d
            details[f"{pair.a}-{pair.b}-spacing"] = round(apart, 3)
            if apart < 0.5:
                desc = f"{pair.a} and {pair.b} overlap"
                findings.append(Finding(_FAIL, scene.ref(pair.a), desc))
    if d:
        for part in rel.small:
            size = scene.alone(part).extent / d
            details[f"{part}-extent"] = round(size, 3)
            if size > th.pedal_max_extent:
                desc = f"{part} spans {size:.2f} {scene.unit}s (too large for a small part)"
                findings.append(Finding(_FAIL, scene.ref(part, "alone"), desc))
    return findings


def present_at(scene: Scene, rel: Relation, th: Thresholds) -> Finding:
    """Every listed part visible; ``round`` parts round; ``small`` ones small; ``apart`` apart."""
    findings: list[Finding] = []
    for part in rel.parts:
        hidden = not_visible_reason(scene, part, th)
        if hidden:
            findings.append(Finding(_FAIL, scene.ref(part), hidden))
    details: dict[str, Any] = dict(scene.info)
    findings += _shape_findings(scene, rel, th, details)
    if not findings:
        return Finding(_UNC, None, "no measurable part", details)
    result = worst(findings)
    if result.status is not _PASS:
        return Finding(result.status, result.artifact_ref, result.description, details)
    desc = rel.summary or "all declared parts visible"
    if rel.round:
        desc += f"; {', '.join(rel.round)} round (axis ratio ≥ {th.wheel_pass_min})"
    if rel.small:
        desc += f"; {', '.join(rel.small)} small"
    return Finding(result.status, result.artifact_ref, desc, details)


SCENE_RULES: dict[RelationKind, SceneRule] = {
    RelationKind.PRESENT: present_at,
    RelationKind.CONTACT: contact_at,
    RelationKind.SEATED: seated_at,
    RelationKind.JOINED: joined_at,
}
"""Rules measured on one scene, by relation kind (``rotates`` needs every frame)."""
