"""Hardened SVG parsing, transforms and approximate geometry for perturbations.

Everything here is pure: text in, trees and numbers out. Geometry is measured in the root
element's user space (the viewBox coordinates), with every ancestor ``transform`` applied.
Shapes are approximated by sampled outline points, which is enough to measure a wheel
diameter, a bounding box or a gap to a pedal reasonably under translate / scale / rotate /
skew / matrix transforms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from lxml import etree

from regua.errors import InputError

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

Matrix = tuple[float, float, float, float, float, float]
"""An affine matrix ``(a, b, c, d, e, f)`` as in SVG: x' = a x + c y + e, y' = b x + d y + f."""

Point = tuple[float, float]

IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TRANSFORM_FN = re.compile(r"(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)")
NON_PAINTING = {
    "defs",
    "clipPath",
    "mask",
    "marker",
    "pattern",
    "symbol",
    "linearGradient",
    "radialGradient",
    "filter",
    "title",
    "desc",
    "metadata",
    "style",
    "script",
}


def parse_svg(text: str | bytes) -> etree._ElementTree:
    """Parse untrusted SVG with a hardened parser (no entities, no network, no DTD)."""
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=False,
    )
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise InputError(f"not well-formed SVG: {exc}") from exc
    if local_name(root) != "svg":
        raise InputError(f"root element is <{local_name(root)}>, not <svg>")
    return etree.ElementTree(root)


def serialize(tree: etree._ElementTree) -> bytes:
    """Deterministic UTF-8 bytes of a tree (no XML declaration, no DOCTYPE, final newline)."""
    out = etree.tostring(tree.getroot(), encoding="utf-8", xml_declaration=False)
    return out if out.endswith(b"\n") else out + b"\n"


def local_name(el: etree._Element) -> str:
    """Tag name without namespace ('' for comments and processing instructions)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def svg_tag(name: str) -> str:
    """Fully qualified SVG tag name."""
    return f"{{{SVG_NS}}}{name}"


def find_id(tree: etree._ElementTree, element_id: str) -> etree._Element | None:
    """The element carrying this id, or None."""
    for el in tree.getroot().iter():
        if isinstance(el.tag, str) and el.get("id") == element_id:
            return el
    return None


def require_id(tree: etree._ElementTree, element_id: str) -> etree._Element:
    """The element carrying this id; raises InputError when absent."""
    el = find_id(tree, element_id)
    if el is None:
        raise InputError(f"the drawing has no element with id {element_id!r}")
    return el


def parse_style(value: str | None) -> dict[str, str]:
    """Parse an inline ``style`` attribute into a property dict."""
    out: dict[str, str] = {}
    for chunk in (value or "").split(";"):
        key, sep, val = chunk.partition(":")
        if sep and key.strip():
            out[key.strip().lower()] = val.strip()
    return out


def presentation(el: etree._Element, name: str) -> str | None:
    """A presentation property from ``style`` (wins) or the attribute itself."""
    style = parse_style(el.get("style"))
    return style.get(name, el.get(name))


def parse_length(value: str | None, default: float = 0.0) -> float:
    """A plain user-unit length ('12', '12px'); other units fall back to their number."""
    if value is None:
        return default
    match = re.match(rf"\s*({NUMBER})", value)
    return float(match.group(1)) if match else default


def viewbox(tree: etree._ElementTree) -> tuple[float, float, float, float]:
    """The root viewBox ``(x, y, width, height)``; falls back to width/height, then 800x600."""
    root = tree.getroot()
    raw = root.get("viewBox")
    if raw:
        nums = [float(n) for n in re.findall(NUMBER, raw)]
        if len(nums) == 4 and nums[2] > 0 and nums[3] > 0:
            return nums[0], nums[1], nums[2], nums[3]
    return 0.0, 0.0, parse_length(root.get("width"), 800.0), parse_length(root.get("height"), 600.0)


# --- affine matrices -------------------------------------------------------------------------


def multiply(m: Matrix, n: Matrix) -> Matrix:
    """Matrix product ``m · n`` (apply n first, then m)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (
        a * a2 + c * b2,
        b * a2 + d * b2,
        a * c2 + c * d2,
        b * c2 + d * d2,
        a * e2 + c * f2 + e,
        b * e2 + d * f2 + f,
    )


def invert(m: Matrix) -> Matrix:
    """Inverse of an affine matrix; raises InputError when singular."""
    a, b, c, d, e, f = m
    det = a * d - b * c
    if abs(det) < 1e-12:
        raise InputError("a transform in the drawing is singular (zero scale)")
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return (ia, ib, ic, id_, -(ia * e + ic * f), -(ib * e + id_ * f))


def apply(m: Matrix, p: Point) -> Point:
    """Apply a matrix to a point."""
    a, b, c, d, e, f = m
    return a * p[0] + c * p[1] + e, b * p[0] + d * p[1] + f


def apply_vector(m: Matrix, v: Point) -> Point:
    """Apply only the linear part of a matrix (for displacements)."""
    a, b, c, d, _, _ = m
    return a * v[0] + c * v[1], b * v[0] + d * v[1]


def parse_transform(value: str | None) -> Matrix:
    """Parse an SVG ``transform`` attribute into one matrix (unknown parts are ignored)."""
    result = IDENTITY
    for name, args_text in _TRANSFORM_FN.findall(value or ""):
        args = [float(x) for x in re.findall(NUMBER, args_text)]
        result = multiply(result, _one_transform(name, args))
    return result


def _one_transform(name: str, args: list[float]) -> Matrix:
    if name == "matrix" and len(args) == 6:
        return (args[0], args[1], args[2], args[3], args[4], args[5])
    if name == "translate" and args:
        return (1.0, 0.0, 0.0, 1.0, args[0], args[1] if len(args) > 1 else 0.0)
    if name == "scale" and args:
        return (args[0], 0.0, 0.0, args[1] if len(args) > 1 else args[0], 0.0, 0.0)
    if name == "rotate" and args:
        t = math.radians(args[0])
        rot: Matrix = (math.cos(t), math.sin(t), -math.sin(t), math.cos(t), 0.0, 0.0)
        if len(args) >= 3:
            cx, cy = args[1], args[2]
            rot = multiply((1, 0, 0, 1, cx, cy), multiply(rot, (1, 0, 0, 1, -cx, -cy)))
        return rot
    if name == "skewX" and args:
        return (1.0, 0.0, math.tan(math.radians(args[0])), 1.0, 0.0, 0.0)
    if name == "skewY" and args:
        return (1.0, math.tan(math.radians(args[0])), 0.0, 1.0, 0.0, 0.0)
    return IDENTITY


def format_matrix(m: Matrix) -> str:
    """A compact ``matrix(...)`` string with rounded numbers (deterministic output)."""
    return "matrix(" + " ".join(_fmt(v) for v in m) + ")"


def _fmt(v: float) -> str:
    text = f"{round(v, 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt(v: float) -> str:
    """A number formatted for SVG attributes (4 decimals, no trailing zeros)."""
    return _fmt(v)


def own_transform(el: etree._Element) -> Matrix:
    """The element's own transform, including x/y placement of ``use`` and nested ``svg``."""
    m = parse_transform(el.get("transform"))
    if local_name(el) in ("use", "svg") and el.getparent() is not None:
        tx, ty = parse_length(el.get("x")), parse_length(el.get("y"))
        m = multiply(m, (1.0, 0.0, 0.0, 1.0, tx, ty))
    return m


def ctm(el: etree._Element) -> Matrix:
    """Transform from the element's own coordinates to root user space."""
    chain: list[etree._Element] = []
    node: etree._Element | None = el
    while node is not None and node.getparent() is not None:
        chain.append(node)
        node = node.getparent()
    m = IDENTITY
    for item in reversed(chain):
        m = multiply(m, own_transform(item))
    return m


def parent_ctm(el: etree._Element) -> Matrix:
    """Transform from the coordinates of the element's parent to root user space."""
    parent = el.getparent()
    return IDENTITY if parent is None else ctm(parent)


def iter_elements(tree: etree._ElementTree) -> Iterator[etree._Element]:
    """Every element (comments and processing instructions skipped)."""
    for el in tree.getroot().iter():
        if isinstance(el.tag, str):
            yield el
