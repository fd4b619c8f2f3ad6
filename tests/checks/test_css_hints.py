"""``css_worthy``'s short cut (hints searched in the text stripped to hint characters) answers
exactly what searching the whole lower-cased text answers, on hostile and random text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks import run_checks
from checks.inspect import css_worthy, suspicious
from checks.vocab import CSS_HINTS, LOCAL_URL
from tests.checks.conftest import svg, task

STATIC = task("pelican-bicycle-static@1")


def reference(value: str) -> bool:
    """The rule itself: a hint anywhere in the lower-cased text once local url(#id) are removed."""
    low = value.lower()
    if "url" in low:
        low = LOCAL_URL.sub("", low)
    return "\\" in value or any(hint in low for hint in CSS_HINTS)


HOSTILE = [
    "",
    "M0 0L10 10z",
    "url(#a)",
    "URL(#a)",
    "Url( '#a' )",
    "anurl(#x)im",  # removing the local reference makes "anim"
    "fa url(#x) de",
    "faurl(#x)de",
    "ur1l(x)",  # a digit inside a hint: no hint
    "u rl",
    "s c r i p t",
    "scr\u0130pt",  # dotted capital I lowers to "i" + a combining dot
    "\u212aimage",  # Kelvin sign lowers to "k"
    "IMAGE",
    "ImAgE(x)",
    "Transition",
    "\\75rl(x)",
    "@import",
    "//x.test",
    "/ /",
    "exPRESSION(1)",
    "-moz-binding",
    "progid:DXImage",
    "behavior:url(x.htc)",
    "srcset",
    "fade",
    "f\u00e1de",
    "\u00e9image",
    "url(#a)url(#b)",
    "url(#a\u00e9)",
    "10 20 30 40 a1 1 0 0 1 5 5 s1 2 3 4 t1 2 v3 h4 q1 2 3 4 c1 2 3 4 5 6 m0 0 l1 1",
    '0 0 120 120"200"black"none"round"url(#grad)"translate(1,2) rotate(3)"',
]


@pytest.mark.parametrize("value", HOSTILE)
def test_the_short_cut_answers_what_the_rule_answers(value: str) -> None:
    assert css_worthy(value) is reference(value)


HINT_CHARACTERS = "".join(CSS_HINTS) + "URLIMAGEFADE"
ALPHABET = st.sampled_from(
    [*HINT_CHARACTERS, *"0123456789 ,.-#()'\"\t\n", "url(#a)", "\u0130", "\u212a", "\u00e9"]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_the_short_cut_agrees_on_random_text(value: str) -> None:
    assert css_worthy(value) is reference(value)


@pytest.mark.parametrize(
    ("attribute", "check"),
    [
        ('fill="URL(http://x.test/a.png)"', "external-ref"),
        ('d="M0 0" filter="url(x.svg#f)"', "external-ref"),
        ('stroke="Url(  //x.test/a  )"', "external-ref"),
        ('transform="ANIMATION"', None),
        ('opacity="\\75rl(x)"', "external-ref"),  # a CSS escape of "url(x)"
    ],
)
def test_a_hint_in_a_plain_value_still_sends_the_element_to_the_careful_path(
    attribute: str, check: str | None
) -> None:
    value = attribute.split("=", 1)[1]
    assert suspicious(value.strip('"'))
    report = run_checks(svg(f"<path {attribute}/>"), STATIC)
    assert report.failed == (() if check is None else (check,))
