"""Perturbations that must not change any verdict (the invariance family).

Each edit changes how the drawing is written or decorated, never what it shows about the parts
and their contacts: background or scenery behind everything, stroke colours, a whole-drawing
mirror, circles written as arc paths, a part reused through ``<use>`` (the id moves onto the
``<use>``), transforms nested so they compose to identity, and sibling reorders that keep the
painting order (only siblings whose painted boxes do not overlap are swapped).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from lxml import etree

from judges.perturbation.edits import (
    ensure_defs,
    new_element,
    set_style,
    unique_id,
    wrap,
)
from judges.perturbation.registry import (
    Effect,
    PerturbationNotApplicableError,
    PerturbationSpec,
    register_perturbation,
)
from judges.perturbation.svg_geometry import BBox, bbox, max_stroke
from judges.perturbation.svgtree import (
    XLINK_NS,
    ctm,
    fmt,
    iter_elements,
    local_name,
    parse_length,
    presentation,
    require_id,
    viewbox,
)

_DRAWING_IDS = ("pelican", "bicycle")
_NOT_DRAWN = {"defs", "title", "desc", "metadata", "style"}
_LIGHT = ("#fdf6e3", "#f0e6ff", "#e8f5e9", "#fff3e0", "#e3f2fd", "#fce4ec")
_DARK = ("#1b4f72", "#6c3483", "#117a65", "#7e5109", "#922b21", "#2e4053", "#4a235a", "#0e6251")
_BRIGHT = ("#f9e79f", "#aed6f1", "#f5b7b1", "#abebc6", "#d7bde2", "#fad7a0", "#ffffff", "#d5f5e3")


def _background(tree: etree._ElementTree) -> etree._Element | None:
    """The first painted element when it is a box covering (almost) the whole viewBox."""
    _, _, vw, vh = viewbox(tree)
    for el in tree.getroot():
        name = local_name(el)
        if not name or name in _NOT_DRAWN:
            continue
        box = bbox(el) if name in ("rect", "path") else None
        if box is not None and box.width * box.height >= 0.95 * vw * vh:
            return el
        return None
    return None


def _is_dark(colour: str | None) -> bool:
    match = re.fullmatch(r"#([0-9a-fA-F]{6})", (colour or "").strip())
    if match is None:
        return False
    r, g, b = (int(match.group(1)[i : i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 110


def _first_drawn_index(root: etree._Element) -> int:
    for i, child in enumerate(root):
        name = local_name(child)
        if name and name not in _NOT_DRAWN:
            return i
    return len(root)


def background_colour(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Recolour the full-size background box, or insert one behind everything."""
    bg = _background(tree)
    old = presentation(bg, "fill") if bg is not None else None
    palette = _DARK if _is_dark(old) else _LIGHT
    colour = str(params["colour"] or rng.choice([c for c in palette if c != old]))
    if bg is not None:
        set_style(bg, "fill", colour)
        return Effect(measured={"mode": "recoloured", "from": old, "to": colour})
    root = tree.getroot()
    vx, vy, vw, vh = viewbox(tree)
    box = {"x": fmt(vx), "y": fmt(vy), "width": fmt(vw), "height": fmt(vh), "fill": colour}
    rect = new_element(root, "rect", box)
    rect.tail = "\n"
    root.insert(_first_drawn_index(root), rect)
    return Effect(measured={"mode": "inserted", "to": colour})


def add_scenery(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Add a sun, clouds and a hill behind the drawing (painted before the first part)."""
    del params  # PerturbFn signature; this edit takes no parameters
    vx, vy, vw, vh = viewbox(tree)
    boxes = [b for b in (bbox(require_id(tree, i)) for i in _DRAWING_IDS) if b is not None]
    mid_x = sum(b.center[0] for b in boxes) / len(boxes) if boxes else vx + vw / 2
    sun_x = vx + vw * (0.12 if mid_x > vx + vw / 2 else 0.88) + rng.uniform(-10, 10)
    sun_y = vy + vh * 0.12 + rng.uniform(-5, 5)
    root = tree.getroot()
    group = new_element(root, "g", {"opacity": "0.9"})
    r = vw * 0.045
    group.append(
        new_element(
            root, "circle", {"cx": fmt(sun_x), "cy": fmt(sun_y), "r": fmt(r), "fill": "#fff2a8"}
        )
    )
    for k in range(2):
        cx = vx + vw * (0.35 + 0.3 * k) + rng.uniform(-20, 20)
        cy = vy + vh * (0.08 + 0.05 * k)
        attrs = {"cx": fmt(cx), "cy": fmt(cy), "rx": fmt(vw * 0.06), "ry": fmt(vh * 0.025)}
        group.append(new_element(root, "ellipse", {**attrs, "fill": "#ffffff"}))
    hill = f"M{fmt(vx)} {fmt(vy + vh * 0.8)} Q{fmt(vx + vw * 0.3)} {fmt(vy + vh * 0.62)} " + (
        f"{fmt(vx + vw * 0.6)} {fmt(vy + vh * 0.8)} Z"
    )
    group.append(new_element(root, "path", {"d": hill, "fill": "#dfe8d0"}))
    group.tail = "\n"
    bg = _background(tree)
    index = list(root).index(bg) + 1 if bg is not None else _first_drawn_index(root)
    root.insert(index, group)
    return Effect(measured={"sun": [sun_x, sun_y, r]})


def stroke_colours(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Map every distinct stroke colour to another one (dark or bright by the background)."""
    del params  # PerturbFn signature; this edit takes no parameters
    bg = _background(tree)
    palette = list(
        _BRIGHT if _is_dark(presentation(bg, "fill") if bg is not None else None) else _DARK
    )
    rng.shuffle(palette)
    mapping: dict[str, str] = {}
    for el in iter_elements(tree):
        value = presentation(el, "stroke")
        if (
            value is None
            or value in ("none", "transparent", "currentColor")
            or value.startswith("url(")
        ):
            continue
        if value not in mapping:
            mapping[value] = palette[len(mapping) % len(palette)]
        set_style(el, "stroke", mapping[value])
    if not mapping:
        raise PerturbationNotApplicableError("the drawing has no stroke colour to change")
    return Effect(measured={"mapping": mapping})


def mirror(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Mirror the whole drawing left-right inside the viewBox with one wrapping group."""
    del params, rng  # PerturbFn signature; this edit is fixed: no parameters, no randomness
    root = tree.getroot()
    vx, _, vw, _ = viewbox(tree)
    group = new_element(root, "g", {"transform": f"matrix(-1 0 0 1 {fmt(2 * vx + vw)} 0)"})
    drawn = [c for c in root if local_name(c) and local_name(c) not in _NOT_DRAWN]
    if not drawn:
        raise PerturbationNotApplicableError("nothing drawn to mirror")
    root.insert(list(root).index(drawn[0]), group)
    group.text = "\n"
    for child in drawn:
        group.append(child)
    group.tail = "\n"
    return Effect(measured={"axis_x": vx + vw / 2})


def circles_as_paths(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Rewrite every circle as a two-arc ``<path>`` with the same attributes and position."""
    del params, rng  # PerturbFn signature; this edit is fixed: no parameters, no randomness
    count = 0
    for el in list(iter_elements(tree)):
        if local_name(el) != "circle":
            continue
        cx, cy, r = (parse_length(el.get(k)) for k in ("cx", "cy", "r"))
        if r <= 0:
            continue
        path = new_element(el, "path")
        for key, value in el.attrib.items():
            if key not in ("cx", "cy", "r"):
                path.set(key, value)
        a = f"A{fmt(r)} {fmt(r)} 0 1 0"
        path.set(
            "d",
            f"M{fmt(cx - r)} {fmt(cy)} {a} {fmt(cx + r)} {fmt(cy)} {a} {fmt(cx - r)} {fmt(cy)}Z",
        )
        path.tail = el.tail
        parent = el.getparent()
        assert parent is not None
        parent.replace(el, path)
        count += 1
    if count == 0:
        raise PerturbationNotApplicableError("the drawing has no circle")
    return Effect(measured={"circles": count})


def use_reuse(tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random) -> Effect:
    """Move a part into ``<defs>`` and draw it through a ``<use>`` that carries the part's id."""
    del rng  # PerturbFn signature; this edit draws nothing at random
    part = str(params["part"])
    el = require_id(tree, part)
    if any(isinstance(d.tag, str) and d.get("id") for d in el.iterdescendants()):
        raise PerturbationNotApplicableError(f"{part} contains other ids; reuse needs a leaf part")
    root = tree.getroot()
    shape_id = unique_id(root, f"{part}-shape")
    use = new_element(el, "use", {"id": part, "href": f"#{shape_id}"})
    use.set(f"{{{XLINK_NS}}}href", f"#{shape_id}")
    use.tail = el.tail
    parent = el.getparent()
    assert parent is not None
    parent.replace(el, use)
    el.set("id", shape_id)
    el.tail = "\n"
    ensure_defs(root).append(el)
    return Effect(measured={"shape_id": shape_id})


_SCALES = (2.0, 0.5, 4.0, 0.25, 1.25)


def nested_transforms(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Wrap a part in two groups whose transforms compose to identity."""
    el = require_id(tree, str(params["part"]))
    a, b = rng.randint(-200, 200), rng.randint(-200, 200)
    angle = rng.randint(-170, 170)
    scale = rng.choice(_SCALES)
    inner = wrap(el, f"scale({fmt(1 / scale)}) rotate({-angle}) translate({-a} {-b})")
    wrap(inner, f"translate({a} {b}) rotate({angle}) scale({fmt(scale)})")
    return Effect(measured={"translate": [a, b], "rotate": angle, "scale": scale})


def _unsafe_to_move(node: etree._Element) -> bool:
    """Paint that may reach beyond the geometric box: filters, markers, text."""
    if not isinstance(node.tag, str):
        return False
    if local_name(node) == "text" or node.get("filter"):
        return True
    return any(str(k).startswith("marker") for k in node.attrib)


def _paint_box(el: etree._Element) -> BBox | None:
    if any(_unsafe_to_move(n) for n in el.iter()):
        return None
    box = bbox(el)
    if box is None:
        return None
    a, b, c, d, _, _ = ctm(el)
    scale = max(abs(a) + abs(c), abs(b) + abs(d))
    return box.expand(max_stroke(el) * scale / 2 + 2.0)


def reorder_keep_paint(
    tree: etree._ElementTree, params: Mapping[str, Any], rng: random.Random
) -> Effect:
    """Swap two adjacent siblings whose painted boxes are disjoint (else move ``<defs>`` last)."""
    del params  # PerturbFn signature; this edit takes no parameters
    if any(local_name(el) == "style" for el in iter_elements(tree)):
        raise PerturbationNotApplicableError("a <style> sheet could depend on element order")
    pairs: list[tuple[etree._Element, etree._Element]] = []
    for el in iter_elements(tree):
        if local_name(el) in _NOT_DRAWN or el.getparent() is None:
            continue
        nxt = el.getnext()
        while nxt is not None and not local_name(nxt):
            nxt = nxt.getnext()
        if nxt is None or local_name(nxt) in _NOT_DRAWN:
            continue
        first, second = _paint_box(el), _paint_box(nxt)
        if first is not None and second is not None and not first.intersects(second):
            pairs.append((el, nxt))
    if pairs:
        el, nxt = rng.choice(pairs)
        el_tail, nxt_tail = el.tail, nxt.tail
        el.addprevious(nxt)
        nxt.tail, el.tail = el_tail, nxt_tail
        names = [x.get("id") or local_name(x) for x in (el, nxt)]
        return Effect(measured={"mode": "swap", "swapped": names, "candidates": len(pairs)})
    root = tree.getroot()
    defs = [c for c in root if local_name(c) == "defs"]
    if not defs:
        raise PerturbationNotApplicableError("no non-overlapping siblings and no <defs> to move")
    root.append(defs[0])
    return Effect(measured={"mode": "move-defs"})


for _spec in (
    PerturbationSpec(
        "background-colour",
        1,
        "must_not_change",
        "Change only the background colour.",
        {"colour": None},
        background_colour,
    ),
    PerturbationSpec(
        "add-scenery",
        1,
        "must_not_change",
        "Add sun, clouds and a hill behind the drawing.",
        {},
        add_scenery,
    ),
    PerturbationSpec(
        "stroke-colours",
        1,
        "must_not_change",
        "Change only the stroke colours.",
        {},
        stroke_colours,
    ),
    PerturbationSpec(
        "mirror", 1, "must_not_change", "Mirror the whole drawing left-right.", {}, mirror
    ),
    PerturbationSpec(
        "circles-as-paths",
        1,
        "must_not_change",
        "Rewrite circles as arc paths.",
        {},
        circles_as_paths,
    ),
    PerturbationSpec(
        "use-reuse",
        1,
        "must_not_change",
        "Move a part into <defs> and draw it through <use> carrying its id.",
        {"part": "wheel-front"},
        use_reuse,
    ),
    PerturbationSpec(
        "nested-transforms",
        1,
        "must_not_change",
        "Wrap a part in transforms that compose to identity.",
        {"part": "frame"},
        nested_transforms,
    ),
    PerturbationSpec(
        "reorder-keep-paint",
        1,
        "must_not_change",
        "Reorder siblings without changing the painting order.",
        {},
        reorder_keep_paint,
    ),
):
    register_perturbation(_spec)
