"""Extraction: fences, bare SVG, prolog, BOM, prose, several candidates, no SVG, truncation."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from checks import POLICY, PROCEDURE_ID, PROCEDURE_VERSION, extract_svg

REPLIES = Path(__file__).resolve().parents[2] / "samples" / "checks" / "replies"
SMALL = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 6"><rect width="1" height="1"/></svg>'
)


@pytest.mark.parametrize("fence", ["```svg", "```xml", "```", "~~~svg", "```SVG", "````svg"])
def test_fenced_blocks(fence: str) -> None:
    close = fence.rstrip("svgxmlSVG")
    ex = extract_svg(f"Here it is:\n{fence}\n{SMALL}\n{close}\nEnjoy!")
    assert ex.status == "found"
    assert ex.svg_text == SMALL
    assert ex.method is not None and ex.method.startswith("fence:")


def test_bare_svg_in_prose_keeps_prolog_in_front() -> None:
    prolog = '<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY a "b">]>\n<!-- c -->\n'
    ex = extract_svg(f"Sure, the drawing:\n{prolog}{SMALL}\nThanks for asking.")
    assert ex.svg_text == prolog + SMALL
    assert ex.method == "svg-element"


def test_whole_reply_that_is_markup_is_taken_whole() -> None:
    doc = f"<html><body>{SMALL}<img src='x' onerror='alert(1)'/></body></html>"
    ex = extract_svg("  \n" + doc + "\n")
    assert ex.method == "whole-document" and ex.svg_text == doc


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ],
)
def test_bom_is_honoured_and_removed(bom: bytes, codec: str) -> None:
    ex = extract_svg(bom + ('<?xml version="1.0"?>' + SMALL).encode(codec))
    assert ex.bom is True and ex.encoding == codec
    assert (
        ex.svg_text is not None
        and ex.svg_text.startswith("<?xml")
        and ex.svg_text.endswith("</svg>")
    )


def test_declared_single_byte_encoding() -> None:
    raw = '<?xml version="1.0" encoding="ISO-8859-1"?><svg xmlns="http://www.w3.org/2000/svg"><title>café</title></svg>'
    ex = extract_svg(raw.encode("latin-1"))
    assert ex.encoding == "iso-8859-1"
    assert ex.svg_text is not None and "café" in ex.svg_text


def test_nested_svg_elements_are_one_candidate() -> None:
    nested = '<svg xmlns="http://www.w3.org/2000/svg"><svg x="1"><rect/></svg><svg/></svg>'
    ex = extract_svg(f"a {nested} b")
    assert ex.candidates == 1 and ex.svg_text == nested


def test_several_candidates_policy_prefers_complete_svg_then_largest() -> None:
    ex = extract_svg((REPLIES / "two-candidates.md").read_text())
    assert ex.candidates == 3 and ex.chosen_index == 1
    assert ex.svg_text is not None and "M240 420" in ex.svg_text
    assert ex.policy == POLICY and any("policy" in n for n in ex.notes)
    assert [c.has_svg for c in ex.candidate_info] == [True, True, False]


def test_no_svg_is_a_result_not_an_error() -> None:
    ex = extract_svg((REPLIES / "no-svg.txt").read_text())
    assert ex.status == "no_svg" and ex.svg_text is None and ex.candidates == 0
    assert ex.to_dict()["status"] == "no_svg"


def test_truncated_reply_runs_to_the_end_and_is_marked_incomplete() -> None:
    ex = extract_svg((REPLIES / "truncated.md").read_text())
    assert ex.status == "found" and ex.method == "fence:svg:svg-element-unterminated"
    assert ex.svg_text is not None and ex.svg_text.endswith("stro")
    assert any("no end tag" in n for n in ex.notes)


def test_xml_document_without_svg_after_prose() -> None:
    ex = extract_svg('Title line\n<?xml version="1.0"?>\n<!DOCTYPE d SYSTEM "http://x/y.dtd"><d/>')
    assert ex.method == "xml-document"
    assert ex.svg_text is not None and ex.svg_text.startswith("<?xml")


def test_procedure_is_recorded_and_text_is_not_in_the_dict_by_default() -> None:
    ex = extract_svg(SMALL)
    d = ex.to_dict()
    assert (d["procedure_id"], d["procedure_version"]) == (PROCEDURE_ID, PROCEDURE_VERSION)
    assert "svg_text" not in d and d["svg_length"] == len(SMALL) and len(d["svg_sha256"]) == 64
    assert ex.to_dict(include_text=True)["svg_text"] == SMALL


def test_inline_fence_and_closing_fence_after_markup() -> None:
    ex = extract_svg(f"```svg {SMALL}```")
    assert ex.svg_text == SMALL
    ex = extract_svg(f"```svg\n{SMALL}```\nmore text")
    assert ex.svg_text == SMALL
