"""Each vector named in issue 2 is caught by the check that names it (static pelican task)."""

from __future__ import annotations

import pytest

from checks import run_checks
from tasks import TaskSpec
from tests.checks.conftest import SVG_NS, svg, task

XL = ' xmlns:xlink="http://www.w3.org/1999/xlink"'
XHTML = "http://www.w3.org/1999/xhtml"
CASES: list[tuple[str, str, str]] = [
    # (name, document, check that must fail)
    ("script-plain", svg("<script>alert(1)</script>"), "script"),
    ("script-upper-case", svg("<SCRIPT>alert(1)</SCRIPT>"), "script"),
    (
        "script-xhtml-ns",
        svg('<x:script xmlns:x="http://www.w3.org/1999/xhtml">1</x:script>'),
        "script",
    ),
    ("script-handler-element", svg('<handler type="application/ecmascript">1</handler>'), "script"),
    (
        "script-iframe-srcdoc",
        svg(f'<foreignObject><iframe xmlns="{XHTML}" srcdoc="x"/></foreignObject>'),
        "script",
    ),
    ("script-css-expression", svg('<rect style="width: expression(alert(1))"/>'), "script"),
    ("script-hidden-in-cdata", svg("<style><![CDATA[ a{} <iframe srcdoc=x> ]]></style>"), "script"),
    ("handler-onload", svg("", extra=' onload="alert(1)"'), "event-handler"),
    ("handler-mixed-case", svg('<rect OnClIcK="alert(1)"/>'), "event-handler"),
    ("handler-namespaced", svg('<rect xmlns:e="urn:e" e:onbegin="alert(1)"/>'), "event-handler"),
    ("handler-in-comment", svg("<!--><img src=x onerror=alert(1)><!-->"), "event-handler"),
    ("js-href", svg('<a href="javascript:alert(1)"><rect/></a>'), "javascript-url"),
    (
        "js-xlink-mixed-case",
        svg('<a xlink:href="JaVaScRiPt:alert(1)"><rect/></a>', XL),
        "javascript-url",
    ),
    (
        "js-char-refs",
        svg('<a href="&#106;&#x61;vascript&#58;alert(1)"><rect/></a>'),
        "javascript-url",
    ),
    ("js-tab-newline", svg('<a href="java&#9;scr&#10;ipt:alert(1)"><rect/></a>'), "javascript-url"),
    (
        "js-leading-controls",
        svg('<a href="&#13;&#10;&#9; &#x7F;javascript:alert(1)"><rect/></a>'),
        "javascript-url",
    ),
    ("parse-c0-char-ref", svg('<a href="&#1;javascript:alert(1)"><rect/></a>'), "parse"),
    (
        "js-data-html",
        svg('<a href="data:text/html;base64,PHNjcmlwdD4="><rect/></a>'),
        "javascript-url",
    ),
    ("js-vbscript", svg('<a href="vbscript:msgbox(1)"><rect/></a>'), "javascript-url"),
    (
        "js-smil-set-href",
        svg('<a><set attributeName="href" to="javascript:alert(1)"/></a>'),
        "javascript-url",
    ),
    (
        "js-smil-animate-values",
        svg('<a><animate attributeName="xlink:href" values="#a;javascript:alert(1)"/></a>', XL),
        "javascript-url",
    ),
    ("js-css-url", svg('<rect style="fill: url(javascript:alert(1))"/>'), "javascript-url"),
    (
        "js-meta-refresh",
        svg(f'<meta xmlns="{XHTML}" http-equiv="refresh" content="0;url=javascript:alert(1)"/>'),
        "javascript-url",
    ),
    ("ext-image-http", svg('<image href="http://example.com/a.png"/>'), "external-ref"),
    ("ext-use-other-file", svg('<use xlink:href="sprites.svg#a"/>', XL), "external-ref"),
    ("ext-use-protocol-relative", svg('<use href="//example.com/s.svg#a"/>'), "external-ref"),
    (
        "ext-feimage",
        svg('<filter><feImage href="http://example.com/x.svg"/></filter>'),
        "external-ref",
    ),
    (
        "ext-css-url",
        svg("<style>rect { fill: url(http://example.com/p.svg#g) }</style>"),
        "external-ref",
    ),
    (
        "ext-css-import-string",
        svg("<style>@import 'https://example.com/a.css';</style>"),
        "external-ref",
    ),
    (
        "ext-css-font-face",
        svg("<style>@font-face{font-family:f;src:url(f.woff)}</style>"),
        "external-ref",
    ),
    (
        "ext-css-image-set",
        svg("<style>rect{fill:-webkit-image-set('a.png' 1x)}</style>"),
        "external-ref",
    ),
    (
        "ext-css-escape-url",
        svg("<style>rect{fill:\\000075\\000072\\00006c(http://e.com/x)}</style>"),
        "external-ref",
    ),
    (
        "ext-css-in-media",
        svg("<style>@media screen { rect { fill: url(http://e.com/x#a) } }</style>"),
        "external-ref",
    ),
    (
        "ext-css-custom-property",
        svg("<style>rect{--p:url(http://e.com/x)}</style>"),
        "external-ref",
    ),
    (
        "ext-css-source-map",
        svg("<style>/*# sourceMappingURL=http://e.com/m */ rect{}</style>"),
        "external-ref",
    ),
    ("ext-presentation-attr", svg('<rect fill="url(http://e.com/p.svg#g)"/>'), "external-ref"),
    (
        "ext-presentation-attr-escape",
        svg('<rect filter="\\75rl(http://e.com/f.svg#f)"/>'),
        "external-ref",
    ),
    (
        "ext-stylesheet-pi",
        '<?xml-stylesheet href="http://e.com/s.css"?>' + svg("<rect/>"),
        "external-ref",
    ),
    ("ext-stylesheet-pi-inside", svg('<?xml-stylesheet href="s.css"?><rect/>'), "external-ref"),
    (
        "ext-smil-set-href",
        svg('<a><set attributeName="href" to="http://e.com/"/></a>'),
        "external-ref",
    ),
    ("ext-any-attribute-url", svg('<rect data-leak="https://e.com/x"/>'), "external-ref"),
    (
        "ext-srcset-list",
        svg(
            '<img xmlns="http://www.w3.org/1999/xhtml" srcset="a.png 1x, https://e.com/b.png 2x"/>'
        ),
        "external-ref",
    ),
    ("ext-xml-base", svg('<g xml:base="http://e.com/"><rect/></g>'), "external-ref"),
    (
        "foreign",
        svg(
            '<foreignObject width="1" height="1"><p xmlns="http://www.w3.org/1999/xhtml">x</p></foreignObject>'
        ),
        "foreign-object",
    ),
    ("foreign-lower-case", svg("<foreignobject/>"), "foreign-object"),
    ("raster-data-png", svg('<image href="data:image/png;base64,AAAA"/>'), "raster-image"),
    ("raster-data-jpeg-ws", svg('<image href=" DATA:image/JPEG;base64,AAAA"/>'), "raster-image"),
    (
        "raster-css-data",
        svg("<style>rect{fill:url('data:image/gif;base64,R0lG')}</style>"),
        "raster-image",
    ),
    (
        "anim-animate",
        svg('<rect><animate attributeName="x" to="10" dur="1s"/></rect>'),
        "animation",
    ),
    (
        "anim-animate-motion",
        svg('<rect><animateMotion path="M0 0 L10 10" dur="1s"/></rect>'),
        "animation",
    ),
    ("anim-css-keyframes", svg("<style>@-webkit-keyframes s{to{opacity:0}}</style>"), "animation"),
    ("anim-css-animation-attr", svg('<rect style="animation: s 1s infinite"/>'), "animation"),
    ("anim-css-transition", svg("<style>rect{transition:fill 1s}</style>"), "animation"),
    ("doctype-entity", '<!DOCTYPE svg [<!ENTITY a "b">]>' + svg("<rect/>"), "doctype"),
    ("doctype-external", '<!DOCTYPE svg SYSTEM "http://e.com/x.dtd">' + svg("<rect/>"), "doctype"),
    (
        "doctype-public-other-system",
        '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://e.com/svg11.dtd">' + svg("<rect/>"),
        "doctype",
    ),
    ("parse-html-fragment", "<svg/onload=alert(1)>", "parse"),
    ("parse-undefined-entity", svg("<text>&nbsp;</text>"), "parse"),
    ("root-no-namespace", '<svg viewBox="0 0 800 600"><rect/></svg>', "root"),
    (
        "root-html",
        f'<html xmlns="http://www.w3.org/1999/xhtml"><svg xmlns="{SVG_NS}"/></html>',
        "root",
    ),
    ("viewbox-missing", f'<svg xmlns="{SVG_NS}"><rect/></svg>', "viewbox"),
    ("viewbox-negative", f'<svg xmlns="{SVG_NS}" viewBox="0 0 -800 600"><rect/></svg>', "viewbox"),
    ("size-long-attribute", svg(f'<rect class="{"a" * 20_001}"/>'), "size"),
    ("size-long-path", svg(f'<path d="M0 0{" L1 1" * 10_001}"/>'), "size"),
    ("size-use-cycle", svg('<g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g>'), "size"),
]


@pytest.mark.parametrize(("doc", "check"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vector_is_caught_by_its_check(doc: str, check: str, static_task: TaskSpec) -> None:
    report = run_checks(doc, static_task)
    result = report.result(check)
    assert result is not None, f"{check} did not run: {report.to_dict()}"
    assert result.status == "fail", report.to_dict()
    assert result.evidence and result.evidence[0].message


@pytest.mark.parametrize(
    "doc",
    [
        svg('<linearGradient id="g"/><rect fill="url(#g)" style="fill: url( \'#g\' )"/>'),
        svg('<use href="#r"/><rect id="r"/>'),
        svg("<style>@namespace svg url(http://www.w3.org/2000/svg); rect{fill:red}</style>"),
        svg('<text x="1" y="1">Tom &amp; Jerry: 3 &lt; 4</text>'),
        svg('<a href="#top"><rect id="top"/></a>'),
    ],
)
def test_harmless_lookalikes_pass(doc: str, static_task: TaskSpec) -> None:
    report = run_checks(doc, static_task)
    assert report.status == "pass", report.to_dict()


def test_features_the_task_allows_are_not_applicable() -> None:
    allowed = task("pelican-bicycle-static@1").output.allowed.model_copy(
        update={
            "scripts": True,
            "external_resources": True,
            "foreign_object": True,
            "raster_images": True,
            "animation": True,
        }
    )
    base = task("pelican-bicycle-static@1")
    permissive = base.model_copy(
        update={"output": base.output.model_copy(update={"allowed": allowed})}
    )
    doc = svg(
        '<script>1</script><rect onclick="1"/><a href="javascript:1"/><image href="a.png"/>'
        '<foreignObject/><animate attributeName="x"/>'
    )
    report = run_checks(doc, permissive)
    for cid in (
        "script",
        "event-handler",
        "javascript-url",
        "external-ref",
        "foreign-object",
        "raster-image",
        "animation",
    ):
        result = report.result(cid)
        assert result is not None and result.status == "not_applicable", cid
    assert report.status == "pass"


def test_evidence_locates_the_problem(static_task: TaskSpec) -> None:
    body = '\n<g>\n<rect/>\n<rect onclick="steal()"/>\n</g>\n'
    doc = f'<svg xmlns="{SVG_NS}" viewBox="0 0 800 600">{body}</svg>'
    result = run_checks(doc, static_task).result("event-handler")
    assert result is not None
    ev = result.evidence[0]
    assert ev.line == 4 and ev.path == "/svg[1]/g[1]/rect[2]"
    assert ev.snippet == 'onclick="steal()"'


def test_markup_hidden_in_a_plain_attribute_is_found(static_task: TaskSpec) -> None:
    doc = svg('<rect class="&lt;img src=x onerror=alert(1)&gt;"/>')
    result = run_checks(doc, static_task).result("event-handler")
    assert result is not None and result.status == "fail"
    assert "parsed as HTML" in result.evidence[0].message


def test_smil_attribute_name_with_spaces(static_task: TaskSpec) -> None:
    doc = svg('<a><set attributeName=" href " to="javascript:alert(1)"/></a>')
    result = run_checks(doc, static_task).result("javascript-url")
    assert result is not None and result.status == "fail"
