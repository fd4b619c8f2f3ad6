"""The compiled walk (``checks._walkc``) records exactly what the Python walk records, and regua
falls back to the Python walk, saying so only in debug logging, when it is not built."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checks import parse_document
from checks import scan as walk_module
from checks.findings import Scan
from checks.scan import SCAN_MAX_ELEMENTS, _Walker
from tests.checks.conftest import scan_state, svg
from tests.conftest import REPO_ROOT, SHARED_CORPORA

XSL = "http://www.w3.org/1999/XSL/Transform"
HOSTILE = [
    svg('<rect fill="url(#g)"/><rect fill="url(http://x.test/a)"/>'),
    svg('<rect fill="ur&#108;(#a)"/><path d="M0 0" stroke="UrL(//x.test)"/>'),
    svg('<rect fill="u"/><rect fill="rl(#a)"/><rect fill="url(#a)l"/>'),
    svg('<rect fill="javascript:alert(1)"/><rect fill="JaVa&#x09;Script:x"/>'),
    svg('<rect fill="mocha:x"/>'),
    svg('<rect stroke="data:text/html,x"/>'),
    svg('<rect fill="x:y" stroke="&lt;"/>'),
    svg('<rect fill="a:b"/><rect fill="x//y.test"/><rect fill="@import"/><rect fill="a\\75 rl"/>'),
    svg('<rect fill="&lt;script&gt;"/><rect fill="&quot;&amp;&apos;"/>'),
    svg('<rect fill="\u212arl(\u0130)" stroke="\ufeffjavascript\u2028:x"/><rect fill="é"/>'),
    svg('<rect fill="\u00e9\u00e9\u00e9"/><rect fill="\u4e2d\U0001f600"/>'),
    svg('<rect fill="image" stroke="fade"/><rect fill="ANIM" stroke="Transition"/>'),
    svg('<rect fill="expression" stroke="behavior"/><rect fill="binding progid src script"/>'),
    svg('<rect fill="" stroke=""/><rect/><rect fill=""/>'),
    svg('<rect fill="u" x="r" y="l(" width="#a)"/>'),
    svg('<rect onload="x()"/><rect data-x="1" fill="red"/><a href="#a"/><use href="#a"/>'),
    svg('<rect xmlns:x="urn:x" x:fill="red"/><rect xml:space="preserve" fill="url(#a)"/>'),
    svg('<SCRIPT>x</SCRIPT><Script/><iframe/><foreignObject/><set attributeName="href"/>'),
    svg(f'<x:template xmlns:x="{XSL}"/><style>rect{{fill:url(x.png)}}</style><filter id="f"/>'),
    svg("<s\u212aript/><scr\u0130pt/><\u00e9/>"),
    svg("<text>a &lt;b onload=x&gt;</text>tail &lt;i&gt;<![CDATA[<script>]]>"),
    svg("<g><!-- a < b --></g><!-- <img onerror=x> -->"),
    svg("<g><!-- ok --></g><?pi x?>"),
    svg("<text>&#60;</text>"),
    svg("".join(f'<g{i} a{i}="{i}"/>' for i in range(300))),
    svg("".join(f'<rect a{i}="url(#x)"/>' for i in range(300))),
    svg('<rect fill="' + "M0 0 L1 1 " * 20_000 + '"/>' + '<rect fill="a\u00e9\u00e9"/>' * 3),
    svg("<g>" * 200 + "<rect/>" + "</g>" * 200),
    svg("<g/>" * SCAN_MAX_ELEMENTS),
    svg("<g/>" * (SCAN_MAX_ELEMENTS + 1)),
    svg('<animate attributeName="style" values="fill:url(http://x.test)"/>'),
    '<?xml-stylesheet href="a.css"?><!-- < --><svg xmlns="http://www.w3.org/2000/svg"/>',
    '<!DOCTYPE svg [<!ENTITY e "x">]><svg xmlns="http://www.w3.org/2000/svg" fill="&e;"/>',
    '<!DOCTYPE svg [<!ENTITY e "&lt;b&gt;">]><svg xmlns="http://www.w3.org/2000/svg">&e;</svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    '<image xlink:href="data:image/png;base64,AAAA"/></svg>',
]


def _texts() -> list[str]:
    files = sorted((REPO_ROOT / "samples").rglob("*.svg"))
    files += sorted((REPO_ROOT / "tests" / "fixtures").rglob("*.svg"))
    files += sorted(SHARED_CORPORA.rglob("*.svg"))  # every corpus, when ../shared is there
    return [p.read_bytes().decode("utf-8", "replace") for p in files] + HOSTILE


def _python_walk(text: str) -> Scan:
    doc = parse_document(text)
    assert doc.root is not None
    scan = Scan()
    walker = _Walker(doc.text, scan)
    if not walker._walk_columns(doc.root):
        walker._walk_nodes(doc.root)
    return scan


def test_the_compiled_walk_is_built() -> None:
    assert walk_module._COMPILED, "checks._walkc is not built: run scripts/setup.sh"


def test_the_compiled_walk_records_what_the_python_walk_records() -> None:
    if not walk_module._COMPILED:
        pytest.skip("checks._walkc is not built")
    taken = compared = 0
    for text in _texts():
        doc = parse_document(text)
        if doc.root is None:
            continue
        compared += 1
        scan = Scan()
        if _Walker(doc.text, scan)._walk_compiled(doc.root):
            taken += 1
            assert scan_state(scan, with_bound=True) == scan_state(
                _python_walk(text), with_bound=True
            ), text[:200]
        else:  # left to the Python walk: nothing recorded
            assert scan_state(scan, with_bound=True)[:3] == ({}, {}, 0)
    assert compared > len(HOSTILE) and taken > compared // 2  # it did decide most documents


def test_the_documents_it_cannot_decide_are_left_to_python() -> None:
    if not walk_module._COMPILED:
        pytest.skip("checks._walkc is not built")
    for body in (
        "<!-- <script> -->",
        "<?pi x?>",
        "<text>&lt;b&gt;</text>",
        '<rect fill="url(http://x.test)"/>',
        "<g/>" * (SCAN_MAX_ELEMENTS + 1),
    ):
        doc = parse_document(svg(body))
        assert doc.root is not None
        assert not _Walker(doc.text, Scan())._walk_compiled(doc.root), body[:40]


FALLBACK = """
import logging, sys
sys.modules["checks._walkc"] = None  # as if it were not built
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(levelname)s %(message)s")
from checks import parse_document, scan
assert not scan._COMPILED
for text in sys.stdin.read().split("\\0"):
    doc = parse_document(text)
    print(repr(sorted((k, [e.message for e in v]) for k, v in doc.scan.findings.items())))
"""


def test_without_the_module_the_python_walk_runs_and_says_so_in_debug_only() -> None:
    texts = HOSTILE[:18]
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK],
        input="\0".join(texts),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    notes = [line for line in lines if "checks._walkc" in line]
    assert notes == ["DEBUG checks._walkc is not built: the shared walk runs in Python only"]
    assert "WARNING" not in done.stdout + done.stderr
    expected = []
    for text in texts:
        findings = parse_document(text).scan.findings
        expected.append(repr(sorted((k, [e.message for e in v]) for k, v in findings.items())))
    assert [line for line in lines if not line.startswith("DEBUG")] == expected
