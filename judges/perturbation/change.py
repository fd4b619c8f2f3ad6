"""Perturbations that must change a verdict (one factor each).

Distances are expressed as fractions of the drawing's wheel diameter (the mean bounding-box
diameter of the wheels, in root user space), never in pixels, so the same recipe means the same
thing on a small or a large drawing. Translations are applied by wrapping the part in a
``<g transform>`` whose displacement is converted into the parent's coordinates, so they work
inside scaled, mirrored or rotated groups.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from lxml import etree

from judges.perturbation.edits import (
    ensure_defs,
    new_element,
    remove,
    set_style,
    strip_ids,
    translate_on_screen,
    unique_id,
    wrap,
)
from judges.perturbation.registry import Effect, PerturbationSpec, register_perturbation
from judges.perturbation.svg_geometry import reference_diameter, require_bbox
from judges.perturbation.svgtree import apply, fmt, invert, parent_ctm, require_id
from regua.errors import CalibrationError

BORDERLINE_FRACTION = 0.05
"""Foot gaps below this fraction of a wheel diameter are borderline by design (``may_change``)."""


def _side(params: Mapping[str, Any], key: str, options: tuple[str, str]) -> str:
    value = str(params[key])
    if value not in options:
        raise CalibrationError(f"parameter {key} must be one of {options}, got {value!r}")
    return value


def foot_off_pedal(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Lift one foot so the gap between its box and its pedal's box is ``fraction`` * D."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    side = _side(params, "foot", ("left", "right"))
    fraction = float(params["fraction"])
    if fraction < 0:
        raise CalibrationError("fraction must be >= 0")
    foot = require_id(tree, f"foot-{side}")
    pedal = require_id(tree, f"pedal-{side}")
    diameter = reference_diameter(tree)
    overlap = require_bbox(foot).y1 - require_bbox(pedal).y0
    shift = max(overlap, 0.0) + fraction * diameter if fraction > 0 else 0.0
    translate_on_screen(foot, 0.0, -shift)
    measured = {"wheel_diameter": diameter, "shift": shift, "gap": fraction * diameter}
    if fraction == 0:
        return Effect(measured=measured)
    if fraction < BORDERLINE_FRACTION:
        return Effect(may_change=("R2",), expected={"R2": "uncertain"}, measured=measured)
    return Effect(must_change=("R2",), expected={"R2": "fail"}, measured=measured)


def remove_wheel(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Delete one wheel element (and everything inside it)."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    side = _side(params, "wheel", ("front", "rear"))
    remove(require_id(tree, f"wheel-{side}"))
    return Effect(must_change=("B1",), may_change=("B2", "F1"), expected={"B1": "fail"})


def detach_frame(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Squeeze the frame horizontally towards the kept axle so it stops short of the other."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    side = _side(params, "wheel", ("front", "rear"))
    scale = float(params["scale"])
    if not 0 < scale < 1:
        raise CalibrationError("scale must be in (0, 1)")
    other = "rear" if side == "front" else "front"
    frame = require_id(tree, "frame")
    kept = require_bbox(require_id(tree, f"wheel-{other}")).center
    lost = require_bbox(require_id(tree, f"wheel-{side}")).center
    cx, cy = apply(invert(parent_ctm(frame)), kept)
    wrap(
        frame,
        f"translate({fmt(cx)} {fmt(cy)}) scale({fmt(scale)} 1) translate({fmt(-cx)} {fmt(-cy)})",
    )
    distance = ((lost[0] - kept[0]) ** 2 + (lost[1] - kept[1]) ** 2) ** 0.5
    diameter = reference_diameter(tree)
    measured = {"axle_offset": (1 - scale) * distance, "wheel_diameter": diameter}
    return Effect(must_change=("B2",), expected={"B2": "fail"}, measured=measured)


def lift_body(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Lift the body so the gap between its box and the saddle's box is ``fraction`` * D."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    fraction = float(params["fraction"])
    if fraction <= 0:
        raise CalibrationError("fraction must be > 0")
    body = require_id(tree, "body")
    overlap = require_bbox(body).y1 - require_bbox(require_id(tree, "saddle")).y0
    diameter = reference_diameter(tree)
    shift = max(overlap, 0.0) + fraction * diameter
    translate_on_screen(body, 0.0, -shift)
    measured = {"wheel_diameter": diameter, "shift": shift}
    return Effect(
        must_change=("R1",), may_change=("P1",), expected={"R1": "fail"}, measured=measured
    )


def pull_wing(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Move both wings horizontally away from the handlebar until ``fraction`` * D clear of it."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    fraction = float(params["fraction"])
    if fraction <= 0:
        raise CalibrationError("fraction must be > 0")
    bar = require_bbox(require_id(tree, "handlebar"))
    body = require_bbox(require_id(tree, "body"))
    direction = -1.0 if bar.center[0] >= body.center[0] else 1.0
    diameter = reference_diameter(tree)
    shifts: dict[str, float] = {}
    for wid in ("wing-left", "wing-right"):
        wing = require_id(tree, wid)
        box = require_bbox(wing)
        overlap = box.x1 - bar.x0 if direction < 0 else bar.x1 - box.x0
        shifts[wid] = max(overlap, 0.0) + fraction * diameter
        translate_on_screen(wing, direction * shifts[wid], 0.0)
    measured = {"wheel_diameter": diameter, "shifts": shifts}
    return Effect(
        must_change=("R3",), may_change=("P1",), expected={"R3": "fail"}, measured=measured
    )


def add_extra_leg(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Draw a copy of one foot (ids stripped) beside it: a third leg."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    side = _side(params, "foot", ("left", "right"))
    foot = require_id(tree, f"foot-{side}")
    bar = require_bbox(require_id(tree, "handlebar"))
    body = require_bbox(require_id(tree, "body"))
    backwards = -1.0 if bar.center[0] >= body.center[0] else 1.0
    diameter = reference_diameter(tree)
    dx = backwards * float(params["offset"]) * diameter
    leg = copy.deepcopy(foot)
    strip_ids(leg)
    leg.tail = None
    foot.addprevious(leg)
    translate_on_screen(leg, dx, 0.0)
    return Effect(must_change=("P1",), expected={"P1": "fail"}, measured={"dx": dx})


_OCCLUDER_COLOURS = ("#2e7d32", "#5d4037", "#455a64", "#6a1b9a")


def occlude_contact(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Paint an opaque rectangle last, over one foot-pedal contact (foot bottom + pedal)."""
    side = _side(params, "foot", ("left", "right"))
    foot = require_bbox(require_id(tree, f"foot-{side}"))
    pedal = require_bbox(require_id(tree, f"pedal-{side}"))
    margin = float(params["margin"]) * reference_diameter(tree)
    x0, x1 = pedal.x0 - margin, pedal.x1 + margin
    y0 = min(pedal.y0, foot.y1) - margin
    y1 = max(pedal.y1, foot.y1) + margin
    root = tree.getroot()
    colour = rng.choice(_OCCLUDER_COLOURS)
    attrs = {"x": fmt(x0), "y": fmt(y0), "width": fmt(x1 - x0), "height": fmt(y1 - y0)}
    rect = new_element(root, "rect", {**attrs, "fill": colour, "stroke": "none"})
    rect.tail = "\n"
    root.append(rect)
    return Effect(
        must_change=("R2",),
        may_change=("B1", "B2", "P1"),
        expected={"R2": "fail"},
        measured={"rect": [x0, y0, x1 - x0, y1 - y0], "colour": colour},
    )


_HIDE_EFFECTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "foot-left": (("R2",), ("P1",)),
    "foot-right": (("R2",), ("P1",)),
    "pedal-left": (("R2",), ("B1", "B2")),
    "pedal-right": (("R2",), ("B1", "B2")),
    "wheel-front": (("B1",), ("B2",)),
    "wheel-rear": (("B1",), ("B2",)),
    "frame": (("B1", "B2"), ()),
    "saddle": (("B1", "R1"), ()),
    "handlebar": (("B1", "R3"), ()),
    "body": (("P1", "R1"), ()),
}


def hide_part(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Make a part invisible by an empty clip path, ``display:none`` or ``opacity:0``."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    part = str(params["part"])
    if part not in _HIDE_EFFECTS:
        raise CalibrationError(f"hide-part supports {sorted(_HIDE_EFFECTS)}, not {part!r}")
    method = str(params["method"])
    el = require_id(tree, part)
    if method == "clip-path":
        root = tree.getroot()
        clip_id = unique_id(root, "regua-hide")
        clip = new_element(root, "clipPath", {"id": clip_id})
        clip.append(new_element(root, "rect", {"x": "0", "y": "0", "width": "0", "height": "0"}))
        ensure_defs(root).append(clip)
        if el.get("clip-path") is None:
            el.set("clip-path", f"url(#{clip_id})")
        else:
            wrap(el, clip_path=f"url(#{clip_id})")
    elif method == "display-none":
        set_style(el, "display", "none")
    elif method == "opacity-0":
        set_style(el, "opacity", "0")
    else:
        raise CalibrationError(
            f"hide-part method must be clip-path|display-none|opacity-0: {method!r}"
        )
    must, may = _HIDE_EFFECTS[part]
    return Effect(must_change=must, may_change=may, expected=dict.fromkeys(must, "fail"))


for _spec in (
    PerturbationSpec(
        "foot-off-pedal",
        1,
        "must_change",
        "Lift a foot off its pedal by a fraction of the wheel diameter (0 = control).",
        {"foot": "left", "fraction": 0.1},
        foot_off_pedal,
    ),
    PerturbationSpec(
        "remove-wheel", 1, "must_change", "Delete one wheel.", {"wheel": "front"}, remove_wheel
    ),
    PerturbationSpec(
        "detach-frame",
        1,
        "must_change",
        "Shrink the frame towards one axle so it no longer reaches the other wheel centre.",
        {"wheel": "front", "scale": 0.75},
        detach_frame,
    ),
    PerturbationSpec(
        "lift-body",
        1,
        "must_change",
        "Lift the body off the saddle by a fraction of the wheel.",
        {"fraction": 0.15},
        lift_body,
    ),
    PerturbationSpec(
        "pull-wing",
        1,
        "must_change",
        "Pull both wings off the handlebar.",
        {"fraction": 0.1},
        pull_wing,
    ),
    PerturbationSpec(
        "add-extra-leg",
        1,
        "must_change",
        "Add a third leg (copy of a foot).",
        {"foot": "left", "offset": 0.12},
        add_extra_leg,
    ),
    PerturbationSpec(
        "occlude-contact",
        1,
        "must_change",
        "Paint an opaque shape last, over a foot-pedal contact.",
        {"foot": "right", "margin": 0.06},
        occlude_contact,
    ),
    PerturbationSpec(
        "hide-part",
        1,
        "must_change",
        "Hide a part by an empty clip path, display:none or opacity:0.",
        {"part": "foot-left", "method": "clip-path"},
        hide_part,
    ),
):
    register_perturbation(_spec)
