"""Approximate geometry of SVG elements in root user space (boxes, wheel diameters).

Shapes are approximated by sampled outline points mapped through every ancestor transform,
which is enough to measure a wheel diameter, a bounding box or a gap to a pedal reasonably under
translate / scale / rotate / skew / matrix transforms and through ``<use>`` references.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from judges.perturbation.pathdata import path_points
from judges.perturbation.svgtree import (
    NON_PAINTING,
    NUMBER,
    XLINK_NS,
    Matrix,
    Point,
    apply,
    ctm,
    find_id,
    local_name,
    multiply,
    own_transform,
    parse_length,
    parse_transform,
    presentation,
    require_id,
)
from regua.errors import InputError


@dataclass(frozen=True)
class BBox:
    """An axis-aligned box in root user space."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        """Width of the box."""
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        """Height of the box."""
        return self.y1 - self.y0

    @property
    def center(self) -> Point:
        """Centre of the box."""
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    def expand(self, margin: float) -> BBox:
        """The box grown by ``margin`` on every side."""
        return BBox(self.x0 - margin, self.y0 - margin, self.x1 + margin, self.y1 + margin)

    def intersects(self, other: BBox) -> bool:
        """True when the boxes overlap or touch."""
        return not (
            self.x1 < other.x0 or other.x1 < self.x0 or self.y1 < other.y0 or other.y1 < self.y0
        )

    @staticmethod
    def of(points: list[Point]) -> BBox:
        """Bounding box of a non-empty point list."""
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        return BBox(min(xs), min(ys), max(xs), max(ys))


def _ellipse_points(cx: float, cy: float, rx: float, ry: float, n: int = 32) -> list[Point]:
    return [
        (cx + rx * math.cos(2 * math.pi * k / n), cy + ry * math.sin(2 * math.pi * k / n))
        for k in range(n)
    ]


def local_points(el: etree._Element) -> list[Point]:
    """Outline points of one basic shape in its own coordinates ([] for other elements)."""
    name = local_name(el)
    g = el.get
    if name == "rect":
        x, y = parse_length(g("x")), parse_length(g("y"))
        w, h = parse_length(g("width")), parse_length(g("height"))
        return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)] if w > 0 and h > 0 else []
    if name == "circle":
        r = parse_length(g("r"))
        return _ellipse_points(parse_length(g("cx")), parse_length(g("cy")), r, r) if r > 0 else []
    if name == "ellipse":
        rx, ry = parse_length(g("rx")), parse_length(g("ry"))
        if rx <= 0 or ry <= 0:
            return []
        return _ellipse_points(parse_length(g("cx")), parse_length(g("cy")), rx, ry)
    if name == "line":
        return [
            (parse_length(g("x1")), parse_length(g("y1"))),
            (parse_length(g("x2")), parse_length(g("y2"))),
        ]
    if name in ("polyline", "polygon"):
        nums = [float(v) for v in re.findall(NUMBER, g("points") or "")]
        return list(zip(nums[0::2], nums[1::2], strict=False))
    if name == "path":
        return path_points(g("d") or "")
    return []


def _referenced(el: etree._Element) -> etree._Element | None:
    href = el.get("href") or el.get(f"{{{XLINK_NS}}}href") or ""
    if not href.startswith("#"):
        return None
    for node in el.getroottree().getroot().iter():
        if isinstance(node.tag, str) and node.get("id") == href[1:]:
            return node
    return None


def subtree_points(el: etree._Element, m: Matrix, depth: int = 0) -> list[Point]:
    """Outline points of an element and its painting descendants, mapped through ``m``."""
    name = local_name(el)
    if not name or name in NON_PAINTING or depth > 32:
        return []
    if presentation(el, "display") == "none":
        return []
    pts = [apply(m, p) for p in local_points(el)]
    if name == "use":
        target = _referenced(el)
        if target is not None:
            pts += subtree_points(
                target, multiply(m, parse_transform(target.get("transform"))), depth + 1
            )
        return pts
    for child in el:
        if isinstance(child.tag, str):
            pts += subtree_points(child, multiply(m, own_transform(child)), depth + 1)
    return pts


def bbox(el: etree._Element) -> BBox | None:
    """Bounding box of an element (with its descendants) in root user space, or None."""
    pts = subtree_points(el, ctm(el))
    return BBox.of(pts) if pts else None


def require_bbox(el: etree._Element) -> BBox:
    """Bounding box or InputError when the element draws nothing measurable."""
    box = bbox(el)
    if box is None:
        raise InputError(f"element {el.get('id') or local_name(el)!r} has no measurable geometry")
    return box


def wheel_diameter(tree: etree._ElementTree, wheel_id: str = "wheel-front") -> float:
    """Diameter of a wheel in root user space: the larger side of its bounding box."""
    box = require_bbox(require_id(tree, wheel_id))
    return max(box.width, box.height)


def reference_diameter(tree: etree._ElementTree) -> float:
    """Mean diameter of the wheels that exist (the unit every distance is expressed in)."""
    sizes = [
        wheel_diameter(tree, wid)
        for wid in ("wheel-front", "wheel-rear")
        if find_id(tree, wid) is not None
    ]
    if not sizes:
        raise InputError("no wheel to measure a diameter from")
    return sum(sizes) / len(sizes)


def reference_length(tree: etree._ElementTree, parts: Sequence[str], measure: str) -> float:
    """A task's declared reference length in root user space: mean ``measure`` of ``parts``.

    ``diameter`` is the larger side of a part's box (as :func:`wheel_diameter`), ``height`` and
    ``width`` its box's sides. Parts the drawing lacks are skipped; none at all is an InputError.
    """
    sizes: list[float] = []
    for pid in parts:
        el = find_id(tree, pid)
        if el is None:
            continue
        box = require_bbox(el)
        sizes.append(
            {"diameter": max(box.width, box.height), "height": box.height}.get(measure, box.width)
        )
    if not sizes:
        raise InputError(f"none of {list(parts)} is drawn: no reference length to measure")
    return sum(sizes) / len(sizes)


def max_stroke(el: etree._Element) -> float:
    """Largest stroke width painted by the element or its descendants (user units, unscaled)."""
    widths = [1.0]
    node: etree._Element | None = el
    while node is not None:
        inherited = presentation(node, "stroke-width")
        if inherited is not None:
            widths.append(parse_length(inherited, 1.0))
            break
        node = node.getparent()
    for child in el.iter():
        if isinstance(child.tag, str):
            w = presentation(child, "stroke-width")
            if w is not None:
                widths.append(parse_length(w, 1.0))
    return max(widths)
