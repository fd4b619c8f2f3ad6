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
from collections.abc import Iterable

from lxml import etree

from checks.boxes import URL, device_scale, region_scale
from checks.boxes import box as box_of
from checks.css_cost import SelectorCost, sheet_cost
from checks.paint_cost import NOTHING, RESOURCE_TAGS, PaintCost, paint_cost
from checks.paint_props import sets_opacity
from checks.parse import Document
from checks.registry import register_check
from checks.scan import element_path, track_tag
from checks.types import CheckResult, Evidence
from checks.vocab import SVG_NS, src_line
from tasks import TaskSpec

CHECK_ID = "render-cost"
_STYLE_FILTER = re.compile(r"(?:^|;)\s*filter\s*:\s*([^;]+)", re.I)
FILTER_TAG = f"{{{SVG_NS}}}filter"
STYLE_TAG = f"{{{SVG_NS}}}style"
_FE = f"{{{SVG_NS}}}fe"
track_tag(FILTER_TAG)  # the shared walk keeps them: a drawing without a filter costs no walk here
track_tag(STYLE_TAG)
_COSTLY = frozenset({FILTER_TAG, STYLE_TAG, *RESOURCE_TAGS})
"""The elements without which a drawing has no filter, selector or resource cost."""


def _user_to_px(root: etree._Element, task: TaskSpec) -> float:
    """Device pixels per user unit² (from the root viewBox to the task's viewport)."""
    sx, sy, _, _ = device_scale(root, task)
    return sx * sy


def _filter_ids(el: etree._Element) -> list[str]:
    refs = URL.findall(el.get("filter") or "")
    style = _STYLE_FILTER.search(el.get("style") or "")
    if style is not None:
        refs += URL.findall(style.group(1))
    return refs


def filter_cost(
    root: etree._Element,
    task: TaskSpec,
    candidates: Iterable[etree._Element] | None = None,
    filter_elements: Iterable[etree._Element] | None = None,
) -> tuple[int, int, etree._Element | None]:
    """(estimated primitive-pixels, filtered elements, the costliest element).

    ``candidates``: the only elements that can reference a filter (those with a ``filter`` or
    ``style`` attribute, in document order) when a walk already found them; else every element.
    ``filter_elements``: every ``<filter>`` in document order when a walk already kept them.
    """
    filters: dict[str | None, int] = {}
    regions: dict[str | None, float] = {}
    for f in root.iter(FILTER_TAG) if filter_elements is None else filter_elements:
        fid = f.get("id")
        filters[fid] = sum(1 for c in f if isinstance(c.tag, str) and c.tag.startswith(_FE))
        regions[fid] = region_scale(f)
    profile = task.render
    viewport = profile.viewport_width * profile.viewport_height * profile.device_scale_factor**2
    px_per_unit = _user_to_px(root, task)
    total, count, worst, worst_cost = 0, 0, None, -1
    for el in root.iter("*") if candidates is None else candidates:
        for fid in _filter_ids(el):
            if fid not in filters:
                continue
            box = box_of(el)
            area = viewport if box is None else box[0] * box[1] * px_per_unit
            cost = int(filters[fid] * min(viewport, area * regions[fid]))
            total, count = total + cost, count + 1
            if cost > worst_cost:
                worst, worst_cost = el, cost
    return total, count, worst


class RenderCostCheck:
    """Registered like a plugin: fails a drawing whose estimated render work is over a limit."""

    id = CHECK_ID
    version = "2"
    needs_tree = True

    def run(self, doc: Document, task: TaskSpec) -> CheckResult:
        """Estimate filter work, layer-pixels and selector work against the task's limits."""
        assert doc.root is not None
        out = task.output
        limits = (out.max_filter_cost, out.max_layer_pixels, out.max_selector_steps)
        scan = doc.scan
        opacity = None  # whether the text sets opacity, once asked
        if (
            scan.tracked.keys().isdisjoint(_COSTLY)  # the walk saw none of them...
            and scan.tracking >= _COSTLY  # ...and it was looking for them all
            and not scan.truncated
        ):
            opacity = sets_opacity(doc.text)
            if not opacity:
                return self._plain(limits)  # what the steps below give such a drawing
        filtered = doc.elements(FILTER_TAG)
        styles = doc.elements(STYLE_TAG)
        paint = paint_cost(doc, task, opacity)
        if not filtered and not styles and paint is NOTHING:  # the same for every such drawing
            return self._plain(limits)
        flt = (
            filter_cost(doc.root, task, paint.filter_candidates, filtered)
            if filtered
            else (0, 0, None)
        )
        sel = sheet_cost(styles, doc.scan.element_count, out.max_depth) if styles else _NO_SELECTORS
        return self._result(limits, flt, paint, sel)

    def _plain(self, limits: tuple[int, int, int]) -> CheckResult:
        """The result of a drawing with no filter, style sheet, layer or resource."""
        found = _PLAIN.get(limits)
        if found is None:
            found = self._result(limits, (0, 0, None), NOTHING, _NO_SELECTORS)
            if len(_PLAIN) < 64:
                _PLAIN[limits] = found
        return found

    def _result(
        self,
        limits: tuple[int, int, int],
        flt: tuple[int, int, etree._Element | None],
        paint: PaintCost,
        sel: SelectorCost,
    ) -> CheckResult:
        (cost, count, worst), (max_filter, max_layers, max_steps) = flt, limits
        over = cost > max_filter
        if over:
            msg = (
                f"filter cost {cost} primitive-pixels ({count} filtered elements) over the limit"
                f" of {max_filter}"
            )
        else:
            msg = f"filter cost {cost} primitive-pixels ({count} filtered elements)"
            msg += f", limit {max_filter}"
        evidence = [_at(msg, worst if over else None)]
        walked = f"{paint.walked} elements walked"
        if paint.stopped:
            over = True
            msg = f"layer estimate stopped after {walked}; failing closed"
            evidence.append(_at(msg, paint.worst))
        elif paint.layer_pixels > max_layers:
            over = True
            msg = f"estimated {paint.layer_pixels} layer-pixels > limit {max_layers} ({walked})"
            evidence.append(_at(msg, paint.worst))
        else:
            msg = f"estimated {paint.layer_pixels} layer-pixels, limit {max_layers} ({walked})"
            evidence.append(Evidence(msg))
        if sel.steps > max_steps:
            over = True
            msg = (
                f"estimated {sel.steps} selector-steps > limit {max_steps} ({sel.selectors}"
                f" selectors; costliest: {sel.worst!r})"
            )
        else:
            msg = f"estimated {sel.steps} selector-steps, limit {max_steps}"
        evidence.append(Evidence(msg))
        return CheckResult(self.id, self.version, "fail" if over else "pass", tuple(evidence))


def _at(message: str, el: etree._Element | None) -> Evidence:
    if el is None:
        return Evidence(message)
    return Evidence(message, src_line(el), element_path(el))


_NO_SELECTORS = SelectorCost(0, 0, "")
_PLAIN: dict[tuple[int, int, int], CheckResult] = {}
register_check(RenderCostCheck())
