"""The static judge on real ``checks`` reports and render logs."""

from __future__ import annotations

from typing import Any

from checks import check_reply
from judges import JudgeFailure, JudgeInput, Verdict, create_judge
from tasks import bundled_registry
from tests.judges.perturb import sample_text

STRUCTURED = bundled_registry().get("pelican-bicycle-structured@1")
ANIMATED = bundled_registry().get("pelican-bicycle-animated@1")
JUDGE = create_judge("static@1")
CLEAN_RENDER: dict[str, Any] = {"blocked_requests": [], "script_executed": False}


def f1(raw: str, render: dict[str, Any] | None = None) -> Verdict | JudgeFailure | None:
    checks = check_reply(raw, STRUCTURED).to_dict()
    crit = STRUCTURED.criterion("F1")
    return JUDGE.judge(JudgeInput(STRUCTURED, crit, (), (), checks, render or {}))


def test_clean_sample_passes_f1() -> None:
    v = f1(sample_text(), CLEAN_RENDER)
    assert isinstance(v, Verdict) and v.status.value == "pass"
    assert v.judge_profile_id == "static@1" and v.evidence.artifact_ref == "checks.json"


def test_script_fails_f1_with_the_failing_check_as_evidence() -> None:
    raw = sample_text().replace("</svg>", "<script>alert(1)</script></svg>")
    v = f1(raw, CLEAN_RENDER)
    assert isinstance(v, Verdict) and v.status.value == "fail"
    assert v.evidence.artifact_ref == "checks.json#script"
    assert "script" in v.evidence.description and "line" in v.evidence.description
    assert "script" in v.details["failed_checks"]


def test_reply_without_svg_fails_f1() -> None:
    v = f1("Sorry, I cannot draw.", CLEAN_RENDER)
    assert isinstance(v, Verdict) and v.status.value == "fail"
    assert "no SVG" in v.evidence.description


def test_render_log_decides_f1() -> None:
    blocked = {"blocked_requests": [{"url": "http://evil.test/x.png", "via": "route"}]}
    v = f1(sample_text(), blocked)
    assert isinstance(v, Verdict) and v.status.value == "fail"
    assert v.evidence.artifact_ref == "render.json#blocked_requests"
    assert "evil.test" in v.evidence.description
    v = f1(sample_text(), {"blocked_requests": [], "script_executed": True})
    assert isinstance(v, Verdict) and v.status.value == "fail"
    # no render log, or a partial one: the static checks alone cannot confirm that nothing ran
    v = f1(sample_text(), None)
    assert isinstance(v, Verdict) and v.status.value == "uncertain"
    partial = {"status": "incomplete", "cause": "render_timeout", "blocked_requests": []}
    v = f1(sample_text(), partial)
    assert isinstance(v, Verdict) and v.status.value == "uncertain"
    assert "render_timeout" in v.evidence.description
    # ...but a request attempted before the render broke is still proof
    v = f1(sample_text(), {**partial, "blocked_requests": [{"url": "http://x.test/"}]})
    assert isinstance(v, Verdict) and v.status.value == "fail"


def test_missing_check_report_is_a_judge_error() -> None:
    crit = STRUCTURED.criterion("F1")
    result = JUDGE.judge(JudgeInput(STRUCTURED, crit, (), (), {}, CLEAN_RENDER))
    assert isinstance(result, JudgeFailure) and result.cause == "no_checks"


def test_static_judge_decides_only_what_it_can() -> None:
    answered = {c.id for c in STRUCTURED.criteria if JUDGE.answers(STRUCTURED, c)}
    assert answered == {"F1"}
    assert {c.id for c in ANIMATED.criteria if JUDGE.answers(ANIMATED, c)} == {"F1", "A1"}
    crit = ANIMATED.criterion("A1")
    still = {"animation": {"detected": False, "kinds": []}}
    v = JUDGE.judge(JudgeInput(ANIMATED, crit, (), (), {"status": "pass"}, still))
    assert isinstance(v, Verdict) and v.status.value == "fail"
    moving = {"animation": {"detected": True, "kinds": ["smil"]}}
    assert JUDGE.judge(JudgeInput(ANIMATED, crit, (), (), {"status": "pass"}, moving)) is None
    partial = {**still, "status": "incomplete", "cause": "render_timeout"}
    assert JUDGE.judge(JudgeInput(ANIMATED, crit, (), (), {"status": "pass"}, partial)) is None
