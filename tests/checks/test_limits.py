"""Resource limits of the task, reported as what they are (issue 14, items 7 and 12).

A document nested deeper than the parser's own limit is well-formed XML that breaks the task's
depth limit: the submitter sees ``size`` fail with "depth N over the limit of M", not ``parse``
fail with "not well-formed XML". Filter work is estimated statically (primitives x filtered
pixels) and refused above the task's ``max_filter_cost``.
"""

from __future__ import annotations

from checks import RESOURCE_LIMIT_CHECKS, run_checks
from checks.depth import PARSER_MAX_DEPTH, text_depth
from tasks import TaskSpec
from tests.checks.conftest import svg


def _nested(depth: int) -> str:
    return svg("\n" + "<g>" * depth + '<circle r="1"/>' + "</g>" * depth)


def test_depth_past_the_parser_limit_is_the_tasks_depth_limit(static_task: TaskSpec) -> None:
    report = run_checks(_nested(300), static_task)
    size, parse = report.result("size"), report.result("parse")
    assert size is not None and parse is not None
    assert report.failed == ("size",)  # what the submitter sees failing: the depth limit
    limit = static_task.output.max_depth
    assert [e.message for e in size.evidence] == [f"depth 302 over the limit of {limit}"]
    assert size.evidence[0].line == 2
    assert parse.status != "fail"
    assert "not well-formed" not in parse.evidence[0].message
    assert f"past the parser's limit of {PARSER_MAX_DEPTH}" in parse.evidence[0].message
    stored = report.to_dict()  # what the check stage stores as checks.json
    assert stored["failed"] == ["size"] and "size" in RESOURCE_LIMIT_CHECKS


def test_depth_under_the_parser_limit_uses_the_same_words(static_task: TaskSpec) -> None:
    report = run_checks(_nested(100), static_task)
    size = report.result("size")
    assert size is not None and size.status == "fail"
    assert size.evidence[0].message == f"depth 102 over the limit of {static_task.output.max_depth}"


def test_malformed_xml_is_still_a_parse_failure(static_task: TaskSpec) -> None:
    report = run_checks(svg("<g><rect></g>"), static_task)
    parse = report.result("parse")
    assert parse is not None and parse.status == "fail"
    assert parse.evidence[0].message.startswith("not well-formed XML")


def test_text_depth_skips_comments_cdata_and_quoted_brackets() -> None:
    text = "<a><!-- <b><b> --><c x=\"<d>\" y='>'><![CDATA[<e><e>]]><f/></c></a>"
    assert text_depth(text) == (3, 1)


def _filtered(count: int, size: int = 800) -> str:
    body = '<filter id="f"><feGaussianBlur stdDeviation="4"/><feOffset dx="2"/></filter>'
    body += "".join(
        f'<rect width="{size}" height="{size * 3 // 4}" filter="url(#f)"/>' for _ in range(count)
    )
    return svg(body)


def test_filter_cost_over_the_task_limit_fails_render_cost(static_task: TaskSpec) -> None:
    report = run_checks(_filtered(150), static_task)
    cost = report.result("render-cost")
    assert cost is not None and cost.status == "fail"
    assert report.failed == ("render-cost",) and "render-cost" in RESOURCE_LIMIT_CHECKS
    # 150 elements x 2 primitives x the 800x600 viewport (the region is clipped to it)
    limit = static_task.output.max_filter_cost
    assert cost.evidence[0].message == (
        f"filter cost 144000000 primitive-pixels (150 filtered elements) over the limit of {limit}"
    )
    assert cost.evidence[0].line is not None and cost.evidence[0].path == "/svg[1]/rect[1]"


def test_a_few_drop_shadows_pass_and_the_limit_is_the_tasks(static_task: TaskSpec) -> None:
    shadows = _filtered(12, size=40)
    report = run_checks(shadows, static_task)
    cost = report.result("render-cost")
    assert cost is not None and cost.status == "pass"
    assert "12 filtered elements" in cost.evidence[0].message
    strict = TaskSpec.model_validate(
        {
            **static_task.to_wire(),
            "output": {**static_task.to_wire()["output"], "max_filter_cost": 1000},
        }
    )
    assert run_checks(shadows, strict).failed == ("render-cost",)


def test_the_new_limit_leaves_existing_spec_hashes_alone(static_task: TaskSpec) -> None:
    wire = static_task.to_wire()
    assert "max_filter_cost" in wire["output"]  # the renderer and the checks see it
    assert "max_filter_cost" not in static_task.canonical_json()  # at its default: not hashed
    changed = TaskSpec.model_validate({**wire, "output": {**wire["output"], "max_filter_cost": 5}})
    assert changed.content_hash() != static_task.content_hash()
