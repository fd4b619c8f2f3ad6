"""The hardened parser: entities never expanded, no DTD or file loaded, bombs refused quickly."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree

from checks import CHECK_STATUSES, check_reply, parse_document, run_checks
from tasks import TaskSpec
from tests.checks.conftest import SVG_NS, svg

LOL = (
    '<!DOCTYPE svg [<!ENTITY l0 "lol">'
    + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    + "]>"
)


def test_billion_laughs_in_attribute_and_text_is_never_expanded(static_task: TaskSpec) -> None:
    doc = LOL + svg("<title>&l9;</title>", extra=' data-x="&l9;"')
    start = time.thread_time()  # CPU time: the same on a busy machine
    report = run_checks(doc, static_task)
    assert time.thread_time() - start < 1.0
    parsed = parse_document(doc)
    assert parsed.root is not None and parsed.neutralised
    assert "lol" not in (parsed.root.get("data-x") or "")  # not substituted
    result = report.result("doctype")
    assert result is not None and result.status == "fail"
    assert any("l9" in e.message for e in result.evidence)


def test_internal_entity_cannot_smuggle_javascript_into_an_attribute(static_task: TaskSpec) -> None:
    doc = '<!DOCTYPE svg [<!ENTITY js "javascript:alert(1)">]>' + svg('<a href="&js;"><rect/></a>')
    parsed = parse_document(doc)
    assert parsed.root is not None
    assert all("javascript" not in (el.get("href") or "") for el in parsed.root.iter())
    assert "doctype" in run_checks(doc, static_task).failed


def test_external_dtd_and_entities_from_local_files_are_not_loaded(
    tmp_path: Path, static_task: TaskSpec
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ENTITY leak "TOP-SECRET-DTD">')
    for prolog, body in [
        (f'<!DOCTYPE svg SYSTEM "file://{dtd}">', "<title>&leak;</title>"),
        (f'<!DOCTYPE svg [<!ENTITY x SYSTEM "file://{secret}">]>', "<title>&x;</title>"),
    ]:
        parsed = parse_document(prolog + svg(body))
        assert parsed.root is not None, parsed.error
        text = "".join(str(t) for t in parsed.root.itertext())

        assert "TOP-SECRET" not in text
        assert "doctype" in run_checks(prolog + svg(body), static_task).failed


def test_standard_svg_doctype_is_accepted_and_not_fetched(static_task: TaskSpec) -> None:
    prolog = (
        '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">'
    )
    report = run_checks(
        '<?xml version="1.0" standalone="no"?>' + prolog + svg("<rect/>"), static_task
    )
    assert report.status == "pass", report.to_dict()


def test_parameter_entities_and_attlist_defaults_are_rejected(static_task: TaskSpec) -> None:
    doc = (
        '<!DOCTYPE svg [<!ENTITY % p SYSTEM "http://example.com/x.dtd"> %p;'
        '<!ATTLIST svg onload CDATA "alert(1)">]>' + svg("<rect/>")
    )
    report = run_checks(doc, static_task)
    doctype = report.result("doctype")
    assert doctype is not None and doctype.status == "fail"
    messages = " ".join(e.message for e in doctype.evidence)
    assert "parameter entity" in messages and "ATTLIST" in messages
    root = parse_document(doc).root
    assert root is not None and root.get("onload") is None  # ATTLIST defaults never applied


def test_deep_nesting_beyond_libxml2_limit_fails_parse_fast(static_task: TaskSpec) -> None:
    doc = f'<svg xmlns="{SVG_NS}">' + "<g>" * 5000 + "</g>" * 5000 + "</svg>"
    start = time.thread_time()  # CPU time: the same on a busy machine
    report = run_checks(doc, static_task)
    assert time.thread_time() - start < 1.0
    assert report.status == "fail" and ("parse" in report.failed or "size" in report.failed)


def test_oversized_input_is_not_parsed(static_task: TaskSpec) -> None:
    doc = svg("<!--" + "x" * 2_100_000 + "-->")
    report = run_checks(doc, static_task)
    parse = report.result("parse")
    assert parse is not None and parse.status == "fail"
    assert "hard cap" in parse.evidence[0].message
    assert "size" in report.failed


def test_many_elements_stay_under_a_second_and_fail_closed(static_task: TaskSpec) -> None:
    doc = svg("<g/>" * 60_000)
    start = time.thread_time()  # CPU time: the same on a busy machine
    report = run_checks(doc, static_task)
    assert time.thread_time() - start < 1.0
    assert {"size", "script", "external-ref"} <= set(report.failed)


SVG_OPEN = f'<svg xmlns="{SVG_NS}">'
HOSTILE: dict[str, Callable[[int], str]] = {
    "unterminated-quotes": lambda n: "x " + '<svg "' * (150 * n),
    "many-small-svgs": lambda n: "x " + "<svg/>" * (150 * n),
    "many-fences": lambda n: "x\n" + "```svg\n<svg/>\n```\n" * (40 * n),
    "nested-opens": lambda n: "x " + "<svg>" * (200 * n),
    "huge-internal-subset": lambda n: "<!DOCTYPE svg [" + '<!ENTITY a "b">' * (60 * n) + "]><svg/>",
    "unterminated-doctype-comments": lambda n: "<!DOCTYPE svg [" + "<!--" * (100 * n),
    "long-letter-attribute": lambda n: SVG_OPEN[:-1] + ' class="' + "a" * (1_500 * n) + '"/>',
    "local-url-run": lambda n: SVG_OPEN + '<rect fill="' + "url(#" * (100 * n) + '"/></svg>',
    "comment-full-of-tags": lambda n: SVG_OPEN + "<!--" + "<a " * (300 * n) + "--></svg>",
    "many-css-attributes": lambda n: SVG_OPEN + '<rect style="fill:url(a)"/>' * (9 * n) + "</svg>",
    "long-opacity-number": lambda n: SVG_OPEN + '<g opacity="' + "1" * (1_500 * n) + 'x"/></svg>',
    "style-letters-url": lambda n: SVG_OPEN + '<g style="url( ' + "a" * (1_500 * n) + '"/></svg>',
    "sheet-without-braces": lambda n: SVG_OPEN + "<style>" + "a" * (1_500 * n) + "</style></svg>",
    "sheet-brackets-spaces": lambda n: (
        SVG_OPEN + "<style>a" + "[ " * (700 * n) + "{}</style></svg>"
    ),
    "sheet-has-run": lambda n: SVG_OPEN + "<style>" + ":has(" * (250 * n) + "{}</style></svg>",
}
"""Hostile reply shapes, ``n`` thousand repetitions long (n = 1000: about 1 MB, under the cap)."""


def _check_cpu_s(reply: str, task: TaskSpec) -> float:
    """The fewest CPU seconds of this thread that three checks of ``reply`` took."""
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()  # CPU time: the same on a busy machine
        check_reply(reply, task)
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_shapes_stay_linear(name: str, static_task: TaskSpec) -> None:
    """Four times the input costs about four times the CPU (a quadratic scan costs sixteen).

    Both sizes are measured in the same process, so coverage tracing or a loaded machine slows
    both alike; the absolute bound only catches a blow-up far beyond any tracing overhead.
    """
    small, large = HOSTILE[name](250), HOSTILE[name](1000)
    report = check_reply(large, static_task)
    assert report.status == "fail"
    assert all(r.status in CHECK_STATUSES for r in report.results)
    small_s, large_s = _check_cpu_s(small, static_task), _check_cpu_s(large, static_task)
    assert large_s < 8 * small_s + 0.05, f"{name}: {small_s:.3f}s -> {large_s:.3f}s for 4x input"
    assert large_s < 5.0


@pytest.mark.parametrize(
    "data",
    [
        svg('<rect id="é" fill="#fff"/>').encode(),
        b"\xef\xbb\xbf" + svg("<text>bom</text>").encode(),
        b'<?xml version="1.0" encoding="ISO-8859-1"?>' + svg("<text>\xe9</text>").encode("latin-1"),
        svg("<text>bad \xff byte</text>").encode("latin-1"),
        "\ufeff".encode("utf-16-le") + svg("<text>wide</text>").encode("utf-16-le"),
        svg('<rect x="1"').encode(),
    ],
)
def test_bytes_parse_exactly_as_the_text_they_decode_to(data: bytes) -> None:
    from_bytes = parse_document(data)
    from_text = parse_document(from_bytes.text)
    assert from_bytes.error == from_text.error
    assert (from_bytes.root is None) == (from_text.root is None)
    if from_bytes.root is not None and from_text.root is not None:
        assert etree.tostring(from_bytes.root) == etree.tostring(from_text.root)
        lines = [e.sourceline for e in from_bytes.root.iter()]
        assert lines == [e.sourceline for e in from_text.root.iter()]
