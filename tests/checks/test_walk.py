"""The shared walk: its column-at-a-time path records exactly what the node-by-node path does,
and a check reads the elements of a tracked tag from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import parse_document
from checks.findings import Scan
from checks.render_cost import FILTER_TAG
from checks.scan import SCAN_MAX_ELEMENTS, _Walker, track_tag
from tests.checks.conftest import SVG_NS, scan_state, svg

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TEXTS = [p.read_text(encoding="utf-8-sig") for p in sorted(SAMPLES.rglob("*.svg"))] + [
    svg('<rect style="fill:url(http://x.test/a)"/><use href="#a"/><g id="a"/>'),
    svg('<rect fill="url(#g)" d="javascript:x"/><animate attributeName="href" to="//x.test"/>'),
    svg('<path d="M0 0" pointer-events="none"/><style>rect{fill:url(data:image/png,x)}</style>'),
    svg("<text>a &lt;script&gt;</text><!-- <img onerror=x> -->"),
    svg("<?xml-stylesheet href='x.css'?><rect/>"),
    svg('<g transform="translate(1 2)"><rect x="1" y="2" fill="#fff" style="stroke:red"/></g>'),
]
DOCUMENTS = [t for t in TEXTS if parse_document(t).root is not None]  # well-formed: a tree to walk


@pytest.mark.parametrize("index", range(len(DOCUMENTS)))
def test_column_walk_records_what_the_node_walk_records(index: int) -> None:
    doc = parse_document(DOCUMENTS[index])
    assert doc.root is not None
    by_columns, by_nodes = Scan(), Scan()
    took_columns = _Walker(doc.text, by_columns)._walk_columns(doc.root)
    _Walker(doc.text, by_nodes)._walk_nodes(doc.root)
    if took_columns:
        assert scan_state(by_columns, with_bound=False) == scan_state(by_nodes, with_bound=False)
    else:  # left to the node walk: nothing recorded
        assert scan_state(by_columns, with_bound=False)[:3] == ({}, {}, 0)


def test_documents_that_could_hide_markup_take_the_node_walk() -> None:
    for body in ("<!-- <script> -->", "<?pi x?>", "<text>&lt;b&gt;</text>"):
        doc = parse_document(svg(body))
        assert doc.root is not None
        assert not _Walker(doc.text, Scan())._walk_columns(doc.root), body


def test_tracked_tags_come_from_the_walk_and_untracked_from_the_tree() -> None:
    doc = parse_document(svg('<filter id="f"/><g><circle r="1"/><filter id="g"/></g><circle/>'))
    assert doc.root is not None
    for tag in (FILTER_TAG, f"{{{SVG_NS}}}circle", f"{{{SVG_NS}}}g", f"{{{SVG_NS}}}rect"):
        assert doc.elements(tag) == list(doc.root.iter(tag))
    assert FILTER_TAG in doc.scan.tracking
    assert [e.get("id") for e in doc.scan.tracked[FILTER_TAG]] == ["f", "g"]
    assert f"{{{SVG_NS}}}circle" not in doc.scan.tracking


def test_a_truncated_walk_leaves_tracked_tags_to_the_tree() -> None:
    doc = parse_document(svg("<g/>" * (SCAN_MAX_ELEMENTS + 5) + '<filter id="late"/>'))
    assert doc.root is not None and doc.scan.truncated
    assert [e.get("id") for e in doc.elements(FILTER_TAG)] == ["late"]


def test_a_tag_seen_before_it_is_tracked_is_kept_once_tracked() -> None:
    """The walk skips the tags it knows to be plain; tracking one makes it count again."""
    tag = "{urn:regua-test:walk}probe"
    text = svg('<probe xmlns="urn:regua-test:walk" id="p"/><rect/>')
    before = parse_document(text)
    assert before.root is not None
    assert tag not in before.scan.tracked
    special = parse_document(text.replace("<rect/>", '<rect/><set attributeName="x"/>'))
    assert "animation" in special.scan.findings  # a special element among plain tags
    track_tag(tag)
    after = parse_document(text)
    assert after.root is not None
    assert [e.get("id") for e in after.scan.tracked[tag]] == ["p"]
    assert after.elements(tag) == list(after.root.iter(tag))
