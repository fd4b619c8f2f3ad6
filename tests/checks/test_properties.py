"""Property tests: random bytes and mutated SVGs never make extraction or checks raise."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import CHECK_STATUSES, check_reply, extract_svg, run_checks
from tests.checks.conftest import task

SAMPLE = (
    Path(__file__).resolve().parents[2] / "samples" / "checks" / "pass" / "pelican-structured.svg"
).read_text()
STATIC = task("pelican-bicycle-static@1")
STRUCTURED = task("pelican-bicycle-structured@1")
FRAGMENTS = [
    "<",
    ">",
    "&",
    "&#0;",
    "&#x6A;",
    "&lt;",
    "]]>",
    "<![CDATA[",
    "<!--",
    "-->",
    "<?",
    "?>",
    "<!DOCTYPE svg [<!ENTITY a 'b'>]>",
    "<!ENTITY x SYSTEM 'file:///etc/passwd'>",
    "&a;",
    '"',
    "'",
    "\x00",
    "\ufeff",
    "\t",
    " onload='x' ",
    ' href="javascript:1" ',
    "url(",
    "\\",
    "<script>",
    "</svg>",
    "<svg>",
    "```svg\n",
    "```",
    "<set attributeName='href' to='x'/>",
    "<style>@import 'x';</style>",
    "<use href='#a'/>",
    " id='a' ",
]


def assert_valid(report_status: str, statuses: list[str]) -> None:
    assert report_status in ("pass", "fail")
    assert all(s in CHECK_STATUSES for s in statuses)
    if "fail" in statuses:
        assert report_status == "fail"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    ex = extract_svg(data)
    assert ex.status in ("found", "no_svg")
    assert (ex.svg_text is None) == (ex.status == "no_svg")
    report = check_reply(data, STATIC)
    assert_valid(report.status, [r.status for r in report.results])
    direct = run_checks(data, STATIC)
    assert_valid(direct.status, [r.status for r in direct.results])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_random_text(text: str) -> None:
    report = check_reply(text, STRUCTURED)
    assert_valid(report.status, [r.status for r in report.results])


@st.composite
def mutated_svg(draw: st.DrawFn) -> str:
    text = SAMPLE
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 80)))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(FRAGMENTS)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "replace":
            text = text[:i] + draw(st.text(max_size=20)) + text[j:]
        else:
            text = text[:i] + text[i:j] * draw(st.integers(2, 20)) + text[j:]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_svg(), st.booleans())
def test_mutated_svgs(text: str, as_bytes: bool) -> None:
    payload: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    report = check_reply(payload, STRUCTURED)
    assert_valid(report.status, [r.status for r in report.results])
    for r in report.results:
        for e in r.evidence:
            assert isinstance(e.message, str) and e.message
            assert e.snippet is None or len(e.snippet) <= 160
    if report.extraction is not None and report.extraction.status == "found":
        assert report.results and report.results[0].id == "parse"
