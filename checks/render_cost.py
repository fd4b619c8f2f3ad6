"""The ``render-cost`` check: a static estimate of the filter work a drawing asks the renderer for.

Filters are the cheap way to make a small file cost seconds of rasterising (a few hundred
full-viewport blurs are 2 KB of text). The estimate, in *primitive-pixels*, is for each element
that a ``filter`` (attribute or ``style``) applies to: the number of filter primitives x the
pixels of its filter region, which is the element's box (when its geometry attributes give one;
the whole viewport otherwise) scaled by the filter's region (``width``/``height``, default 120 %)
and clipped to the viewport. A drawing over the task's ``max_filter_cost`` fails and is not
rendered. Pure.
"""

from __future__ import annotations

import re

from lxml import etree

from checks.parse import Document
from checks.registry import register_check
from checks.scan import element_path, track_tag
from checks.types import CheckResult, Evidence
from checks.vocab import SVG_NS, local_name, src_line
from tasks import TaskSpec

CHECK_ID = "render-cost"
_URL = re.compile(r"url\(\s*['\"]?#([^'\")\s]+)['\"]?\s*\)")
_STYLE_FILTER = re.compile(r"(?:^|;)\s*filter\s*:\s*([^;]+)", re.I)
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%|px)?\s*$")
DEFAULT_REGION = 1.2
FILTER_TAG = f"{{{SVG_NS}}}filter"
track_tag(FILTER_TAG)  # the shared walk keeps them: a drawing without a filter costs no walk here


def _number(value: str | None) -> tuple[float, bool] | None:
    """A length as (value, is_percent), or None when it is not a plain number."""
    if value is None:
        return None
    m = _NUMBER.match(value)
    return (float(m.group(1)), m.group(2) == "%") if m else None


def _region_scale(flt: etree._Element) -> float:
    """How much larger than the element's box the filter region is (area factor)."""
    scale = 1.0
    for name in ("width", "height"):
        n = _number(flt.get(name))
        if n is None or flt.get("filterUnits") == "userSpaceOnUse":
            scale *= DEFAULT_REGION
        else:
            scale *= max(0.0, n[0] / 100.0 if n[1] else n[0])
    return scale


def _box(el: etree._Element) -> tuple[float, float] | None:
    """The element's size in user units from its own geometry attributes, when it has one."""
    tag = local_name(str(el.tag))
    if tag in ("rect", "image", "use", "foreignObject", "svg"):
        w, h = _number(el.get("width")), _number(el.get("height"))
        if w and h and not w[1] and not h[1]:
            return abs(w[0]), abs(h[0])
    if tag == "circle":
        r = _number(el.get("r"))
        return (2 * abs(r[0]), 2 * abs(r[0])) if r and not r[1] else None
    if tag == "ellipse":
        rx, ry = _number(el.get("rx")), _number(el.get("ry"))
        if rx and ry and not rx[1] and not ry[1]:
            return 2 * abs(rx[0]), 2 * abs(ry[0])
    return None


def _user_to_px(root: etree._Element, task: TaskSpec) -> float:
    """Device pixels per user unit² (from the root viewBox to the task's viewport)."""
    profile = task.render
    sx = profile.viewport_width * profile.device_scale_factor
    sy = profile.viewport_height * profile.device_scale_factor
    parts = (root.get("viewBox") or "").replace(",", " ").split()
    try:
        vw, vh = float(parts[2]), float(parts[3])
    except (IndexError, ValueError):
        return 1.0 * profile.device_scale_factor**2
    return (sx / vw) * (sy / vh) if vw > 0 and vh > 0 else 1.0


def _filter_ids(el: etree._Element) -> list[str]:
    refs = _URL.findall(el.get("filter") or "")
    style = _STYLE_FILTER.search(el.get("style") or "")
    if style is not None:
        refs += _URL.findall(style.group(1))
    return refs


def filter_cost(root: etree._Element, task: TaskSpec) -> tuple[int, int, etree._Element | None]:
    """(estimated primitive-pixels, filtered elements, the costliest element)."""
    filters = {
        f.get("id"): sum(
            1 for c in f if isinstance(c.tag, str) and c.tag.startswith(f"{{{SVG_NS}}}fe")
        )
        for f in root.iter(f"{{{SVG_NS}}}filter")
    }
    regions = {f.get("id"): _region_scale(f) for f in root.iter(f"{{{SVG_NS}}}filter")}
    profile = task.render
    viewport = profile.viewport_width * profile.viewport_height * profile.device_scale_factor**2
    px_per_unit = _user_to_px(root, task)
    total, count, worst, worst_cost = 0, 0, None, -1
    for el in root.iter("*"):
        for fid in _filter_ids(el):
            if fid not in filters:
                continue
            box = _box(el)
            area = viewport if box is None else box[0] * box[1] * px_per_unit
            cost = int(filters[fid] * min(viewport, area * regions[fid]))
            total, count = total + cost, count + 1
            if cost > worst_cost:
                worst, worst_cost = el, cost
    return total, count, worst


class RenderCostCheck:
    """Registered like a plugin: fails a drawing whose filter work is over the task's limit."""

    id = CHECK_ID
    version = "1"
    needs_tree = True

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        """Estimate the filter cost of ``doc`` against ``task.output.max_filter_cost``."""
        assert doc.root is not None
        limit = task.output.max_filter_cost
        if not doc.elements(FILTER_TAG):  # no filter: the same result for every such drawing
            found = _UNFILTERED.get(limit)
            if found is None:
                found = self._result(limit, 0, 0, None)
                if len(_UNFILTERED) < 64:
                    _UNFILTERED[limit] = found
            return found
        return self._result(limit, *filter_cost(doc.root, task))

    def _result(
        self, limit: int, cost: int, count: int, worst: etree._Element | None
    ) -> CheckResult:
        if cost > limit:
            msg = (
                f"filter cost {cost} primitive-pixels ({count} filtered elements) over the limit"
                f" of {limit}"
            )
            line = src_line(worst) if worst is not None else None
            path = element_path(worst) if worst is not None else None
            return CheckResult(self.id, self.version, "fail", (Evidence(msg, line, path),))
        msg = f"filter cost {cost} primitive-pixels ({count} filtered elements), limit {limit}"
        return CheckResult(self.id, self.version, "pass", (Evidence(msg),))


_UNFILTERED: dict[int, CheckResult] = {}
register_check(RenderCostCheck())
