"""Render-cost bombs beyond filters (issue 24, finding 8): small drawings that passed every check
and cost a render worker 18-51 s now fail ``render-cost`` with their measure, and are therefore
never rendered (``render-cost`` is a resource-limit check; see
``tests/service/pipeline/test_budget.py``).

What the submitter sees is the failed check's evidence: "estimated N layer-pixels > limit M" (or
selector-steps), on the element whose layers cost the most. Each estimate is cheap: the tests
count the elements it walks (never time), which stays linear in the document.
"""

from __future__ import annotations

import re
import sys

from checks import RESOURCE_LIMIT_CHECKS, parse_document, run_checks
from checks.css_cost import selector_cost, sheet_cost
from checks.paint_cost import MAX_WALK, paint_cost
from checks.render_cost import STYLE_TAG
from tasks import TaskSpec
from tests.checks.conftest import svg

LAYERS = re.compile(r"^estimated (\d+) layer-pixels > limit (\d+) \((\d+) elements walked\)$")
STEPS = re.compile(r"^estimated (\d+) selector-steps > limit (\d+) \((\d+) selectors; ")


def nested_patterns(levels: int = 5, fan: int = 6) -> str:
    """Patterns whose one-tile content is ``fan`` shapes filled with the pattern a level down."""
    defs = ['<pattern id="p0" width="0.5" height="0.5"><rect width="3" height="3" fill="#c30"/>']
    for k in range(1, levels + 1):
        kids = "".join(
            f'<rect x="{i * 3}" y="{i * 2}" width="{800 - i * 7}" height="{600 - i * 5}"'
            f' fill="url(#p{k - 1})"/>'
            for i in range(fan)
        )
        defs.append(f'</pattern><pattern id="p{k}" width="1" height="1">{kids}')
    body = "<defs>" + "".join(defs) + "</pattern></defs>"
    return svg(body + f'<rect width="800" height="600" fill="url(#p{levels})"/>')


def mask_chain(levels: int = 200) -> str:
    """Each mask's content is masked by the mask before it: one offscreen layer per level."""
    masks = ['<mask id="m0"><rect width="800" height="600" fill="#fff"/></mask>']
    masks += [
        f'<mask id="m{k}"><rect width="800" height="600" fill="#fff" mask="url(#m{k - 1})"/></mask>'
        for k in range(1, levels)
    ]
    rect = f'<rect width="800" height="600" fill="#36c" mask="url(#m{levels - 1})"/>'
    return svg("".join(masks) + rect)


def blur_chain(primitives: int = 60, sigma: int = 200) -> str:
    """Chained wide blurs in a huge filter region: each surface grows by the blurs after it."""
    blurs = "".join(
        f'<feGaussianBlur stdDeviation="{sigma}" result="b{i}"/>' for i in range(primitives)
    )
    flt = f'<filter id="f" x="-1000%" y="-1000%" width="2100%" height="2100%">{blurs}</filter>'
    return svg(flt + '<rect width="800" height="600" fill="#36c" filter="url(#f)"/>')


def nested_filters(levels: int = 60, sigma: int = 20) -> str:
    """Groups nested ``levels`` deep, each through a blur (11.8 s of CPU in Chromium at 60)."""
    flt = f'<filter id="f"><feGaussianBlur stdDeviation="{sigma}"/></filter>'
    body = '<g filter="url(#f)">' * levels + '<rect width="800" height="600"/>' + "</g>" * levels
    return svg(flt + body)


def selector_bomb(chains: int = 40, depth: int = 30, selectors: int = 60) -> str:
    """Nested ``:has()`` and ``:not()`` selectors over a few thousand nested elements."""
    chain = "<g>" * depth + '<rect width="8" height="8"/>' + "</g>" * depth
    css = " ".join(
        f"g:has(g:has(g:has(rect))) g:not(:has(g:not(:has(circle)))) rect:nth-child({i}n)"
        f" {{fill:#{i % 10}{i % 10}0}}"
        for i in range(1, selectors + 1)
    )
    return svg(f"<style>{css}</style>" + chain * chains)


def _elements(text: str) -> int:
    root = parse_document(text).root
    assert root is not None
    return sum(1 for _ in root.iter())


def _failed_layers(text: str, task: TaskSpec) -> tuple[int, int, int, str | None]:
    report = run_checks(text, task)
    assert report.failed == ("render-cost",) and "render-cost" in RESOURCE_LIMIT_CHECKS
    result = report.result("render-cost")
    assert result is not None and result.status == "fail"
    found = [(LAYERS.match(e.message), e.path) for e in result.evidence]
    (m, path), *_ = [(m, p) for m, p in found if m is not None]
    estimate, limit, walked = (int(g) for g in m.groups())
    assert limit == task.output.max_layer_pixels and estimate > limit
    return estimate, limit, walked, path


def test_nested_patterns_fail_render_cost_with_their_measure(static_task: TaskSpec) -> None:
    text = nested_patterns()
    assert 1500 < len(text) < 4000
    estimate, limit, walked, path = _failed_layers(text, static_task)
    assert estimate > 10 * limit  # fan 6 over 5 levels: 6^5 tile contents
    assert path == "/svg[1]/rect[1]"  # the drawing's one painted element
    assert walked <= 2 * _elements(text)  # memoised per tile context: linear, not 6^5


def test_a_chain_of_200_masks_fails_render_cost_with_its_measure(static_task: TaskSpec) -> None:
    text = mask_chain()
    assert 16_000 < len(text) < 18_000
    estimate, _, walked, path = _failed_layers(text, static_task)
    # 200 levels x 3 passes over the 800x600 viewport (the 120 % mask region is clipped to it)
    assert estimate == 200 * 3 * 800 * 600
    assert path == "/svg[1]/rect[1]"
    # the document's 402 elements once, and each mask's rect again when its mask is costed
    assert walked == 402 + 200 == _elements(text) + 200


def test_a_mask_chain_deeper_than_the_interpreters_stack_is_estimated_in_full(
    static_task: TaskSpec,
) -> None:
    # the walk keeps its own stack: a chain deeper than Python's recursion limit (whatever the
    # caller's stack already holds: a worker, pytest, coverage) is costed, not "RecursionError"
    levels = 2 * sys.getrecursionlimit()
    doc = parse_document(mask_chain(levels))
    cost = paint_cost(doc, static_task)
    assert not cost.stopped and cost.cycles == 0
    assert cost.layer_pixels == levels * 3 * 800 * 600
    assert cost.walked == 2 * levels + 2 + levels
    assert cost.worst is not None and cost.worst.get("mask") == f"url(#m{levels - 1})"


def test_a_blur_chain_fails_render_cost_though_its_filter_cost_passes(
    static_task: TaskSpec,
) -> None:
    text = blur_chain()
    assert 3000 < len(text) < 4500
    result = run_checks(text, static_task).result("render-cost")
    assert result is not None and result.evidence[0].message.startswith(
        "filter cost 28800000 primitive-pixels (1 filtered elements), limit"
    )  # 60 primitives x the viewport: the filter estimate alone let it through
    estimate, limit, walked, _ = _failed_layers(text, static_task)
    assert estimate > 100 * limit and walked == _elements(text) == 63


def test_nested_blurred_groups_fail_render_cost(static_task: TaskSpec) -> None:
    text = nested_filters()
    estimate, limit, walked, path = _failed_layers(text, static_task)
    assert limit < estimate < 2 * limit and walked == _elements(text) == 64
    assert path is not None and path.startswith("/svg[1]/g[1]")


def test_a_selector_bomb_fails_render_cost_with_its_measure(static_task: TaskSpec) -> None:
    text = selector_bomb()
    report = run_checks(text, static_task)
    assert report.failed == ("render-cost",)
    result = report.result("render-cost")
    assert result is not None
    (m,) = [m for m in (STEPS.match(e.message) for e in result.evidence) if m is not None]
    steps, limit, selectors = (int(g) for g in m.groups())
    assert limit == static_task.output.max_selector_steps and steps > limit and selectors == 60
    doc = parse_document(text)
    assert doc.root is not None
    cost = sheet_cost(doc.elements(STYLE_TAG), doc.scan.element_count, static_task.output.max_depth)
    assert cost.selectors == 60 and cost.worst.startswith("g:has(g:has(")


def test_selector_cost_weighs_has_nesting_and_combinators() -> None:
    assert selector_cost("rect", 1000, 10) == 1
    assert selector_cost(".a.b#c", 1000, 10) == 3
    assert selector_cost("g rect", 1000, 10) == 2 + 10  # one descendant combinator: depth
    assert selector_cost("g > rect", 1000, 10) == 2
    assert selector_cost(":not(.a)", 1000, 10) == 1 + 1
    assert selector_cost("g:has(rect)", 1000, 10) == 2 + 1000  # elements x its argument
    assert selector_cost("g:has(g:has(rect))", 1000, 10) == 2 + 1000 * (2 + 1000)
    assert selector_cost(":not(" * 40 + "a" + ")" * 40, 10, 1) == 2**62  # past the nesting cap


def test_a_reference_cycle_ends_and_counts_once(static_task: TaskSpec) -> None:
    text = svg(
        '<mask id="a"><rect width="800" height="600" mask="url(#b)"/></mask>'
        '<mask id="b"><rect width="800" height="600" mask="url(#a)"/></mask>'
        '<rect width="10" height="10" mask="url(#a)"/>'
    )
    doc = parse_document(text)
    assert doc.root is not None
    cost = paint_cost(doc, static_task)
    assert cost.cycles == 1 and not cost.stopped and cost.walked < 10
    assert run_checks(text, static_task).status == "pass"


def test_use_fan_out_of_masked_groups_multiplies_but_walks_linearly(
    static_task: TaskSpec,
) -> None:
    defs = ['<mask id="m"><rect width="800" height="600" fill="#fff"/></mask>']
    defs.append('<g id="l0" mask="url(#m)"><rect width="8" height="8"/></g>')
    defs += [
        f'<g id="l{k}">' + f'<use href="#l{k - 1}"/>' * 10 + "</g>" for k in range(1, 6)
    ]  # 10^5 masked instances, 60 elements
    text = svg("<defs>" + "".join(defs) + '</defs><use href="#l5"/>')
    doc = parse_document(text)
    assert doc.root is not None
    cost = paint_cost(doc, static_task)
    assert cost.layer_pixels == 10**5 * 3 * 800 * 600
    assert cost.walked <= 2 * _elements(text)  # each used group costed once
    assert cost.walked < MAX_WALK and not cost.stopped


def test_plain_drawings_are_not_walked_and_the_limits_are_the_tasks(
    static_task: TaskSpec,
) -> None:
    plain = svg('<rect width="800" height="600" fill="#fff"/><circle r="4"/>')
    doc = parse_document(plain)
    assert doc.root is not None and paint_cost(doc, static_task).walked == 0
    text = mask_chain(levels=20)
    assert run_checks(text, static_task).status == "pass"
    wire = static_task.to_wire()
    strict = TaskSpec.model_validate(
        {**wire, "output": {**wire["output"], "max_layer_pixels": 1_000_000}}
    )
    estimate, limit, _, _ = _failed_layers(text, strict)
    assert (estimate, limit) == (20 * 3 * 800 * 600, 1_000_000)
    assert "max_layer_pixels" not in static_task.canonical_json()  # at its default: not hashed
    assert strict.content_hash() != static_task.content_hash()
