"""Perturbations built from the geometry a task declares.

The pelican built-ins (:mod:`judges.perturbation.change`) know the pelican part ids; these
read everything from parameters that :func:`declared_recipes` fills in from the task's
declaration (:func:`tasks.declared.declared_geometry`): which part moves off which, the
reference length that scales the move, and the criteria the edit must (or may) change. So a new
structured task gets a perturbation set for each geometric criterion with no code change, and
the manifest line of every variant records the declaration it was made from.

* ``separate-parts`` — moves each ``a`` off its ``b`` until their boxes are ``fraction`` of the
  reference length apart (``box``), or moves ``b`` until its centre is that far outside ``a``'s
  box (``centre``, a join to an axle); for contact, seated and joined relations.
* ``hide-declared-part`` — hides one declared part (``display:none``); for ``present``.
* ``freeze-part`` — removes the animation of the rotating part and of the pair its angle is
  read from; for ``rotates``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from judges.perturbation.edits import remove, set_style, translate_on_screen
from judges.perturbation.registry import (
    Effect,
    PerturbationNotApplicableError,
    PerturbationSpec,
    register_perturbation,
)
from judges.perturbation.svg_geometry import BBox, reference_length, require_bbox
from judges.perturbation.svgtree import XLINK_NS, local_name, require_id
from regua.errors import CalibrationError

SEPARATION = 0.2
"""Default gap (fraction of the reference length): beyond every contact and join band."""
_ANIMATIONS = frozenset({"animate", "animateTransform", "animateMotion", "set"})


def _box_gap(a: BBox, b: BBox) -> float:
    dx = max(b.x0 - a.x1, a.x0 - b.x1, 0.0)
    dy = max(b.y0 - a.y1, a.y0 - b.y1, 0.0)
    return math.hypot(dx, dy)


def _point_gap(p: tuple[float, float], box: BBox) -> float:
    dx = max(box.x0 - p[0], p[0] - box.x1, 0.0)
    dy = max(box.y0 - p[1], p[1] - box.y1, 0.0)
    return math.hypot(dx, dy)


def _direction(frm: tuple[float, float], to: tuple[float, float]) -> tuple[float, float]:
    dx, dy = to[0] - frm[0], to[1] - frm[1]
    norm = math.hypot(dx, dy)
    return (0.0, -1.0) if norm < 1e-9 else (dx / norm, dy / norm)


def _solve(distance: Callable[[float], float], target: float, reach: float) -> float:
    """The smallest shift t >= 0 with ``distance(t) >= target`` (bisection on [0, reach])."""
    lo, hi = 0.0, reach
    if distance(hi) < target:
        raise CalibrationError("cannot separate the parts along their centre line")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if distance(mid) < target else (lo, mid)
    return hi


def _move(tree: etree._ElementTree, a_id: str, b_id: str, mode: str, target: float) -> float:
    """Move one part so the declared pair is ``target`` apart; returns the shift length."""
    a, b = require_bbox(require_id(tree, a_id)), require_bbox(require_id(tree, b_id))
    reach = 4 * (a.width + a.height + b.width + b.height + target) + 1.0
    if mode == "centre":
        u = _direction(a.center, b.center)
        c = b.center
        t = _solve(lambda s: _point_gap((c[0] + s * u[0], c[1] + s * u[1]), a), target, reach)
        translate_on_screen(require_id(tree, b_id), t * u[0], t * u[1])
        return t
    u = _direction(b.center, a.center)

    def gap_at(s: float) -> float:
        dx, dy = s * u[0], s * u[1]
        return _box_gap(BBox(a.x0 + dx, a.y0 + dy, a.x1 + dx, a.y1 + dy), b)

    t = _solve(gap_at, target, reach)
    translate_on_screen(require_id(tree, a_id), t * u[0], t * u[1])
    return t


def _effect(params: Mapping[str, Any], measured: Mapping[str, Any]) -> Effect:
    must = tuple(str(c) for c in params["must"])
    may = tuple(str(c) for c in params["may"])
    return Effect(must, may, dict.fromkeys(must, "fail"), measured)


def separate_parts(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Move each declared pair apart by ``fraction`` of the declared reference length."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    fraction = float(params["fraction"])
    if fraction <= 0:
        raise CalibrationError("fraction must be > 0")
    unit = reference_length(tree, list(params["reference"]), str(params["measure"]))
    shifts = {}
    for a_id, b_id, mode in params["moves"]:
        shifts[f"{a_id}|{b_id}"] = _move(tree, str(a_id), str(b_id), str(mode), fraction * unit)
    return _effect(params, {"reference_length": unit, "shifts": shifts})


def hide_declared_part(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Hide one declared part with ``display:none``."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    set_style(require_id(tree, str(params["part"])), "display", "none")
    return _effect(params, {})


def _animations_of(tree: etree._ElementTree, part: etree._Element) -> list[etree._Element]:
    """SMIL animation elements inside ``part`` or targeting it by reference."""
    ref = f"#{part.get('id')}"
    return [
        el
        for el in tree.getroot().iter()
        if isinstance(el.tag, str)
        and local_name(el) in _ANIMATIONS
        and (
            part in el.iterancestors()
            or (el.get("href") or el.get(f"{{{XLINK_NS}}}href") or "") == ref
        )
    ]


def freeze_part(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Remove every SMIL animation of the parts and switch off their CSS animations."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    parts = [require_id(tree, str(p)) for p in params["parts"]]
    found = [a for part in parts for a in _animations_of(tree, part)]
    styled = any(local_name(el) == "style" for el in tree.getroot().iter()) or any(
        "animation" in (el.get("style") or "")
        for part in parts
        for el in part.iter()
        if isinstance(el.tag, str)
    )
    if not found and not styled:
        raise PerturbationNotApplicableError(f"{list(params['parts'])}: no animation to remove")
    for el in dict.fromkeys(found):
        if el.getparent() is not None:
            remove(el)
    for part in parts:
        for el in part.iter():
            if isinstance(el.tag, str) and local_name(el) not in _ANIMATIONS:
                set_style(el, "animation", "none")
    return _effect(params, {"removed_animations": len(set(found))})


DECLARED_PERTURBATIONS = ("separate-parts", "hide-declared-part", "freeze-part")
"""Ids of these perturbations: not in the standard battery, their parameters come from a task."""
_COMMON: dict[str, Any] = {"must": [], "may": []}
for _spec in (
    PerturbationSpec(
        "separate-parts",
        1,
        "must_change",
        "Move declared parts apart by a fraction of the declared reference length.",
        {
            "moves": [],
            "fraction": SEPARATION,
            "reference": [],
            "measure": "diameter",
            **_COMMON,
        },
        separate_parts,
    ),
    PerturbationSpec(
        "hide-declared-part",
        1,
        "must_change",
        "Hide one declared part (display:none).",
        {"part": "", **_COMMON},
        hide_declared_part,
    ),
    PerturbationSpec(
        "freeze-part",
        1,
        "must_change",
        "Remove the animation of declared parts (a rotating part and its direction pair).",
        {"parts": [], **_COMMON},
        freeze_part,
    ),
):
    register_perturbation(_spec)
