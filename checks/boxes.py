"""Geometry the render-cost estimates share: lengths, element boxes, regions, device scale.

Only what an element's own attributes say (no transforms, no CSS layout): a box is known for a
``rect``/``image``/``use``/``svg``/``foreignObject`` with plain ``width``/``height``, a ``circle``
or an ``ellipse``; anything else covers the whole of its context (the viewport, or a pattern
tile). Pure.
"""

from __future__ import annotations

import math
import re

from lxml import etree

from checks.vocab import local_name
from tasks import TaskSpec

URL = re.compile(r"url\(\s{0,8}['\"]?#([^'\")\s]{1,256})['\"]?\s{0,8}\)")
"""A local ``url(#id)`` reference; group 1 is the id (bounded: a search stays linear)."""
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%|px)?\s*$")
MAX_NUMBER_TEXT = 64
"""Longer values are not read as numbers (their match would cost quadratic time)."""
DEFAULT_REGION = 1.2
"""Filter and mask regions default to 120 % of the element's box on each axis."""


def number(value: str | None) -> tuple[float, bool] | None:
    """A length as (value, is_percent), or None when it is not a plain number."""
    if value is None or len(value) > MAX_NUMBER_TEXT:
        return None
    m = _NUMBER.match(value)
    return (float(m.group(1)), m.group(2) == "%") if m else None


def region_axes(el: etree._Element) -> tuple[float, float]:
    """How much wider and taller than the element's box a filter or mask region is."""
    user = el.get("filterUnits") == "userSpaceOnUse" or el.get("maskUnits") == "userSpaceOnUse"
    out = []
    for name in ("width", "height"):
        n = number(el.get(name))
        if n is None or user:
            out.append(DEFAULT_REGION)
        else:
            out.append(max(0.0, n[0] / 100.0 if n[1] else n[0]))
    return out[0], out[1]


def region_scale(el: etree._Element) -> float:
    """How much larger than the element's box a filter region is (area factor)."""
    fx, fy = region_axes(el)
    return fx * fy


def box(el: etree._Element) -> tuple[float, float] | None:
    """The element's size in user units from its own geometry attributes, when it has one."""
    tag = local_name(str(el.tag))
    if tag in ("rect", "image", "use", "foreignObject", "svg"):
        w, h = number(el.get("width")), number(el.get("height"))
        if w and h and not w[1] and not h[1]:
            return abs(w[0]), abs(h[0])
    if tag == "circle":
        r = number(el.get("r"))
        return (2 * abs(r[0]), 2 * abs(r[0])) if r and not r[1] else None
    if tag == "ellipse":
        rx, ry = number(el.get("rx")), number(el.get("ry"))
        if rx and ry and not rx[1] and not ry[1]:
            return 2 * abs(rx[0]), 2 * abs(ry[0])
    return None


def device_scale(root: etree._Element, task: TaskSpec) -> tuple[float, float, float, float]:
    """(device pixels per user unit on x, on y, viewport width, height in device pixels)."""
    profile = task.render
    vw = profile.viewport_width * profile.device_scale_factor
    vh = profile.viewport_height * profile.device_scale_factor
    parts = (root.get("viewBox") or "").replace(",", " ").split()
    try:
        bw, bh = float(parts[2]), float(parts[3])
    except (IndexError, ValueError):
        return profile.device_scale_factor, profile.device_scale_factor, vw, vh
    if bw > 0 and bh > 0:
        return vw / bw, vh / bh, vw, vh
    return 1.0, 1.0, vw, vh


PRIMITIVE_PASSES = {"feGaussianBlur": 6, "feDropShadow": 7, "feMorphology": 2}
"""Passes a filter primitive makes over its surface (a blur is three box blurs per axis, a
morphology one pass per axis); any other primitive writes its surface once."""


def floats(value: str | None) -> list[float]:
    """Up to two absolute numbers of a list attribute (none when one is not a number)."""
    out = []
    for part in (value or "").replace(",", " ").split()[:2]:
        try:
            f = abs(float(part))
        except ValueError:
            return []
        out.append(f if math.isfinite(f) else 0.0)
    return out


def length(value: str | None, scale: float, whole: float, default: float) -> float:
    """A user-space length in device pixels (a percentage of ``whole``), else ``default``."""
    n = number(value)
    if n is None or not math.isfinite(n[0]):
        return default
    return abs(n[0]) / 100 * whole if n[1] else abs(n[0]) * scale


def margin(prim: etree._Element) -> tuple[float, float]:
    """How much input a filter primitive reads around each output pixel, in its units."""
    name = local_name(str(prim.tag))
    if name in ("feGaussianBlur", "feDropShadow"):
        sigma = floats(prim.get("stdDeviation")) or [0.0]
        mx, my = 3 * sigma[0], 3 * sigma[-1]
        if name == "feDropShadow":
            d = floats(prim.get("dx")) + floats(prim.get("dy"))
            mx, my = mx + (d[0] if d else 0.0), my + (d[-1] if len(d) > 1 else 0.0)
        return mx, my
    if name == "feMorphology":
        r = floats(prim.get("radius")) or [0.0]
        return r[0], r[-1]
    if name == "feOffset":
        dx, dy = floats(prim.get("dx")), floats(prim.get("dy"))
        return (dx[0] if dx else 0.0), (dy[0] if dy else 0.0)
    if name == "feDisplacementMap":
        s = floats(prim.get("scale"))
        return (s[0] / 2, s[0] / 2) if s else (0.0, 0.0)
    return 0.0, 0.0
