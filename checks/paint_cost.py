"""Offscreen *layer-pixels*: a static estimate of the compositing work a drawing asks for.

Part of the ``render-cost`` check. Small drawings can cost a renderer tens
of seconds without a single expensive filter: a chain of masks (each mask references content
that is itself masked), patterns whose tiles are filled with patterns, a filter chain whose
kernels make every intermediate surface larger than the viewport. What they have in common is
offscreen surfaces, so the estimate counts the pixels of every surface the render needs:

* for every element painted (the tree from the root, and the content of every resource it
  reaches through ``url(#...)`` or ``<use>``, followed transitively), the layers it needs:

  - ``mask``: three passes over the mask region (default 120 % of the element's box per axis:
    the masked content's layer, the mask's layer, its luminance applied), plus the cost of
    painting the mask's content;
  - ``clip-path``: a layer of the element's box plus the cost of the clip path's content;
  - ``filter``: the source graphic and one surface per primitive, each the filter region clipped
    to the viewport grown by the kernel margins of the primitives that follow (a blur needs
    3 sigma of input around what it outputs, a morphology its radius, an offset its shift),
    counted once per pass (a blur makes six, a morphology two);
  - group ``opacity`` below 1 (on ``g``, ``a``, ``svg``, ``use``, ``switch``): a layer of its box;
  - a ``fill``/``stroke`` with a ``<pattern>``: the filled area, the tile's surface and the cost
    of the tile's content (painted in a context the size of the tile), so a tile holding several
    pattern-filled shapes multiplies the cost by that fan-out at every level of nesting (Chromium
    rasterises a tile once per use, not once per repetition: the tile count is not a factor);

* the box of an element comes from its own geometry attributes (the whole viewport, or the whole
  pattern tile, when it has none), in device pixels of the task's viewport.

Each resource is costed once per context (memoised), a reference cycle counts nothing more (the
renderer does not draw it either), and the walk stops after :data:`MAX_WALK` elements: a walk
that stops is reported as such (the estimate is then a lower bound and the check fails closed).
Resources nest as deep as the document makes them (a chain of 10,000 masks is 10,000 levels), so
the walk keeps its own stack of resource contents instead of recursing: its depth is bounded by
:data:`MAX_WALK`, never by the interpreter's recursion limit or by what the caller already uses.
A drawing with no mask, clip path, pattern or filter and no ``opacity`` costs nothing and is not
walked. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import cast

from lxml import etree

from checks.boxes import (
    PRIMITIVE_PASSES,
    URL,
    box,
    device_scale,
    length,
    margin,
    number,
    region_axes,
)
from checks.paint_props import (
    GROUP_TAGS,
    GROUPS,
    PAINTS,
    READ,
    hidden,
    href_of,
    layer_props,
    local_of,
    sets_opacity,
)
from checks.parse import Document
from checks.scan import track_tag
from checks.vocab import SVG_NS
from tasks import TaskSpec

MAX_WALK = 100_000
"""Elements the estimate visits at most (every resource content counted each time it is costed
in a new context); beyond, the estimate stops and the check fails closed."""
MAX_VALUEREAD = 512
"""Characters of a property value searched for its ``url(#id)`` (ids are at most 256 long)."""
MAX_TEMPLATE_HOPS = 8
"""``href`` hops followed to find the pattern a pattern inherits its tile and content from."""

MASK_PASSES = 3
"""A mask writes the masked content's layer, the mask's layer, and its luminance over the first."""
RESOURCE_NAMES = ("mask", "clipPath", "pattern", "filter")
RESOURCE_TAGS = tuple(f"{{{SVG_NS}}}{t}" for t in RESOURCE_NAMES)
for _tag in RESOURCE_TAGS:
    track_tag(_tag)  # the shared walk keeps them: a drawing without any needs no walk here
USE_TAG = f"{{{SVG_NS}}}use"
_IDS_UNDER = etree.XPath("descendant::*/@id")
"""The ``id`` values of the elements under a root, in document order (what ``.//*[@id]`` finds,
read in one C-level pass; each value knows its element)."""
Size = tuple[float, float]


@dataclass(frozen=True, slots=True)
class _Content:
    """A request for the cost of painting a resource's content in a context.

    The walk's own stack answers it, memoised per ``key`` and context.
    """

    key: str
    kids: list[etree._Element]
    cap: Size


Costing = Generator[_Content, float, float]
"""A step of the estimate: yields the resource contents it needs, returns its cost."""


@dataclass(frozen=True, slots=True)
class PaintCost:
    """The estimate for one document."""

    layer_pixels: int
    walked: int
    """Elements visited (the estimate's own cost)."""
    worst: etree._Element | None
    """The element whose layers (with what they reach) cost the most."""
    cycles: int
    """References skipped because they lead back into themselves."""
    stopped: bool
    """The walk reached :data:`MAX_WALK` (the estimate is a lower bound)."""
    filter_candidates: tuple[etree._Element, ...] | None = None
    """When the whole document was walked: every element with a ``filter`` or ``style``
    attribute, in document order (the filter-cost estimate reads only those)."""


class _Walk:
    """One estimate: the document's id map, the memo of costed resources and the counters."""

    def __init__(
        self, root: etree._Element, scale: tuple[float, float, float, float], patterns: bool
    ) -> None:
        self.root = root
        self.read = READ | PAINTS if patterns else READ
        self.filter_candidates: list[etree._Element] = []
        self.sx, self.sy, vw, vh = scale
        self.view: Size = (vw, vh)
        self._ids: dict[str, etree._Element] | None = None
        self.memo: dict[tuple[str, int, int], float] = {}
        self.filters: dict[str, _FilterShape] = {}
        self.active: set[str] = set()
        self.walked = 0
        self.cycles = 0
        self.worst: etree._Element | None = None
        self.worst_cost = 0.0

    def by_id(self, ref: str | None) -> etree._Element | None:
        """The first element with this id."""
        if ref is None:
            return None
        if self._ids is None:
            self._ids = {}
            values = cast("list[etree._ElementUnicodeResult]", _IDS_UNDER(self.root))
            for value in values:
                parent = value.getparent()  # an attribute's value: never None
                if parent is not None:
                    self._ids.setdefault(str(value), parent)
        return self._ids.get(ref)

    def resource(self, prop: str | None, tag: str) -> tuple[str, etree._Element] | None:
        """The ``tag`` element a ``url(#id)`` property value references, with its id."""
        m = URL.search(prop[:MAX_VALUEREAD]) if prop else None
        el = self.by_id(m.group(1)) if m else None
        return (m.group(1), el) if m and el is not None and local_of(el) == tag else None

    def total(self, step: Costing) -> float:
        """Run ``step`` to its cost.

        The resource contents it asks for (and those they ask for, to any depth) are answered
        from an explicit stack.
        """
        stack: list[tuple[Costing, tuple[str, tuple[str, int, int]] | None]] = [(step, None)]
        answer: float | None = None
        while True:
            current, entered = stack[-1]
            try:
                need = next(current) if answer is None else current.send(answer)
            except StopIteration as done:
                stack.pop()
                answer = float(done.value)
                if entered is not None:
                    self.active.discard(entered[0])
                    self.memo[entered[1]] = answer
                if not stack:
                    return answer
                continue
            memo_key = (need.key, _bucket(need.cap[0]), _bucket(need.cap[1]))
            answer = self.memo.get(memo_key)
            if answer is None and need.key in self.active:
                self.cycles += 1
                answer = 0.0
            elif answer is None:
                self.active.add(need.key)
                stack.append((self.contents(need.kids, need.cap), (need.key, memo_key)))

    def contents(self, kids: list[etree._Element], cap: Size) -> Costing:
        """What painting ``kids`` (a resource's content) costs in a ``cap`` context."""
        cost = 0.0
        for child in kids:
            cost += yield from self.paint(child, cap)
        return cost

    def paint(self, top: etree._Element, cap: Size) -> Costing:
        """What painting ``top`` and its subtree costs in a context of at most ``cap`` pixels.

        Only the elements with a layer property (or a ``<use>``) are read; those under an element
        that is not painted where it stands are skipped.
        """
        cost, read = 0.0, self.read
        for el in top.iter(etree.Element):
            self.walked += 1
            if self.walked > MAX_WALK:
                return cost
            is_use = el.tag == USE_TAG
            keys = el.keys()
            if not is_use and read.isdisjoint(keys):
                continue
            if top is self.root and ("filter" in keys or "style" in keys):
                self.filter_candidates.append(el)
            tag = local_of(el)
            props = layer_props(el)
            if tag not in GROUPS:
                props.pop("opacity", None)  # a shape's own opacity needs no layer
            if (props or is_use) and not hidden(el, top):
                cost += (yield from self.layers(el, tag, props, cap)) if props else 0.0
                cost += (yield from self.used(el, cap)) if is_use else 0.0
        return cost

    def size(self, el: etree._Element, cap: Size) -> Size:
        """The element's box in device pixels, within ``cap`` (the whole of it when unknown)."""
        b = box(el)
        if b is None:
            return cap
        return min(b[0] * self.sx, cap[0]), min(b[1] * self.sy, cap[1])

    def layers(self, el: etree._Element, tag: str, props: dict[str, str], cap: Size) -> Costing:
        """The layers ``el`` itself needs, with the content of the resources they reach."""
        w, h = self.size(el, cap)
        cost = 0.0
        opacity = number(props.get("opacity"))
        if tag in GROUPS and opacity is not None:
            value = opacity[0] / 100 if opacity[1] else opacity[0]
            cost += w * h if value < 1 else 0.0
        mask = self.resource(props.get("mask"), "mask")
        if mask is not None:
            fx, fy = region_axes(mask[1])
            region = (min(w * fx, cap[0]), min(h * fy, cap[1]))
            area = MASK_PASSES * region[0] * region[1]
            cost += area + (yield _Content(mask[0], list(mask[1]), region))
        clip = self.resource(props.get("clip-path"), "clipPath")
        if clip is not None:
            cost += w * h + (yield _Content(clip[0], list(clip[1]), (w, h)))
        flt = self.resource(props.get("filter"), "filter")
        if flt is not None:
            cost += self.filtered(flt[0], flt[1], w, h)
        for paint in (props.get("fill"), props.get("stroke")):
            pattern = self.resource(paint, "pattern")
            if pattern is not None:
                cost += yield from self.pattern(pattern[0], pattern[1], (w, h))
        if cost > self.worst_cost:
            self.worst, self.worst_cost = el, cost
        return cost

    def used(self, el: etree._Element, cap: Size) -> Costing:
        """What the element a ``<use>`` instantiates costs (once per context)."""
        ref = href_of(el)
        target = self.by_id(ref)
        if ref is None or target is None:
            return 0.0
        kids = list(target) if local_of(target) == "symbol" else [target]
        return (yield _Content("use:" + ref, kids, cap))

    def pattern(self, key: str, pat: etree._Element, size: Size) -> Costing:
        """The filled area, the tile's surface and the tile's content (painted once per use)."""
        chain = self.templates(pat)
        tile = self.tile(chain, size)
        if tile is None:
            return 0.0
        holder = next((p for p in chain if any(isinstance(c.tag, str) for c in p)), pat)
        cap = (min(tile[0], self.view[0]), min(tile[1], self.view[1]))
        content = yield _Content("pattern:" + key, list(holder), cap)
        return size[0] * size[1] + cap[0] * cap[1] + content

    def templates(self, pat: etree._Element) -> list[etree._Element]:
        """The pattern and those it inherits from through ``href`` (cycles and hops bounded)."""
        chain = [pat]
        while len(chain) <= MAX_TEMPLATE_HOPS:
            nxt = self.by_id(href_of(chain[-1]))
            if nxt is None or local_of(nxt) != "pattern" or any(nxt is p for p in chain):
                break
            chain.append(nxt)
        return chain

    def tile(self, chain: list[etree._Element], size: Size) -> Size | None:
        """A pattern tile in device pixels (None when it has no area: nothing is painted)."""
        units = next((p.get("patternUnits") for p in chain if p.get("patternUnits")), None)
        dims = []
        for name, scale, whole, own in (
            ("width", self.sx, self.view[0], size[0]),
            ("height", self.sy, self.view[1], size[1]),
        ):
            n = next((number(p.get(name)) for p in chain if p.get(name) is not None), None)
            if n is None or n[0] <= 0 or not math.isfinite(n[0]):
                return None
            if units == "userSpaceOnUse":
                dims.append(n[0] / 100 * whole if n[1] else n[0] * scale)
            else:
                dims.append((n[0] / 100 if n[1] else n[0]) * own)
        return (dims[0], dims[1]) if dims[0] > 0 and dims[1] > 0 else None

    def filtered(self, key: str, flt: etree._Element, w: float, h: float) -> float:
        """The source graphic and every primitive's surface (grown by later kernel margins)."""
        memo_key = ("filter:" + key, int(w), int(h))
        found = self.memo.get(memo_key)
        if found is not None:
            return found
        shape = self.filters.get(key)
        if shape is None or shape[0] is not flt:
            shape = self.filters[key] = _filter_shape(flt)
        _, (fx, fy), user, bbox, prims = shape
        if user:
            rw = length(flt.get("width"), self.sx, self.view[0], w * fx)
            rh = length(flt.get("height"), self.sy, self.view[1], h * fy)
        else:
            rw, rh = w * fx, h * fy
        need_x = need_y = cost = 0.0
        for passes, (mx, my) in prims:
            surface = min(rw, self.view[0] + 2 * need_x) * min(rh, self.view[1] + 2 * need_y)
            cost += surface * passes
            need_x += mx * (w if bbox else self.sx)
            need_y += my * (h if bbox else self.sy)
        cost += min(rw, self.view[0] + 2 * need_x) * min(rh, self.view[1] + 2 * need_y)
        self.memo[memo_key] = cost
        return cost


_FilterShape = tuple[
    etree._Element, tuple[float, float], bool, bool, list[tuple[int, tuple[float, float]]]
]
"""What a filter's cost reads of its element, whatever the box it filters: the element, its
region axes, whether its region is in user space, whether its primitives' units are the box,
and (passes, kernel margins) of each primitive, last first."""


def _filter_shape(flt: etree._Element) -> _FilterShape:
    """Read a filter's region and primitives once (its cost is asked once per filtered box)."""
    prims = [c for c in flt if local_of(c).startswith("fe")]
    steps = [(PRIMITIVE_PASSES.get(local_of(p), 1), margin(p)) for p in reversed(prims)]
    user = flt.get("filterUnits") == "userSpaceOnUse"
    bbox = flt.get("primitiveUnits") == "objectBoundingBox"
    return flt, region_axes(flt), user, bbox, steps


def _bucket(pixels: float) -> int:
    """Contexts within a factor of two of each other share a memo entry (the walk stays linear)."""
    return int(math.log2(pixels + 1.0))


def paint_cost(doc: Document, task: TaskSpec, opacity: bool | None = None) -> PaintCost:
    """The layer-pixels of painting the parsed document ``doc`` on ``task``.

    Nothing is walked when the drawing has no mask, clip path, pattern or filter and sets no
    ``opacity`` (with opacity alone, only the groups are read). A drawing that needs no layer
    gives :data:`NOTHING`. ``opacity``: what :func:`sets_opacity` says of the document's text,
    when the caller already asked it.
    """
    root = doc.root
    if root is None:
        return NOTHING
    text = doc.text
    tracked = [bool(doc.elements(tag)) for tag in RESOURCE_TAGS]
    if any(tracked):
        walk = _Walk(root, device_scale(root, task), bool(tracked[2]))
        total = walk.total(walk.paint(root, walk.view))
    elif sets_opacity(text) if opacity is None else opacity:
        candidates = [
            el
            for el in root.iter(*GROUP_TAGS)
            if el.get("opacity") is not None or "pacity" in (el.get("style") or "")
        ]
        if not candidates:
            return NOTHING
        walk, total = _Walk(root, device_scale(root, task), False), 0.0
        for el in candidates:  # only group opacity can cost: only those groups are read
            walk.walked += 1
            if not hidden(el, root):
                total += walk.total(walk.layers(el, local_of(el), layer_props(el), walk.view))
    else:
        return NOTHING
    stopped = walk.walked > MAX_WALK
    found = None if stopped or not any(tracked) else tuple(walk.filter_candidates)
    if total <= 0 and not stopped and found is None:
        return NOTHING
    px = int(min(total, 2**62))
    return PaintCost(px, walk.walked, walk.worst, walk.cycles, stopped, found)


NOTHING = PaintCost(0, 0, None, 0, False)
