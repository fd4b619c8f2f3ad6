"""The static judge on real ``checks`` reports and render logs."""

from __future__ import annotations

from checks import check_reply
from judges import (
    CheckSummary,
    JudgeFailure,
    JudgeInput,
    RenderSummary,
    Verdict,
    create_judge,
)
from tasks import bundled_registry
from tests.helpers.perturb import sample_text

STRUCTURED = bundled_registry().get("pelican-bicycle-structured@1")
ANIMATED = bundled_registry().get("pelican-bicycle-animated@1")
JUDGE = create_judge("static@1")
CLEAN_RENDER = RenderSummary.from_doc({"blocked_requests": [], "script_executed": False})
PASSING_CHECKS = CheckSummary.from_doc({"status": "pass"})


def f1(raw: str, render: RenderSummary | None = None) -> Verdict | JudgeFailure | None:
    checks = CheckSummary.from_doc(check_reply(raw, STRUCTURED).to_dict())
    crit = STRUCTURED.criterion("F1")
    return JUDGE.judge(JudgeInput(STRUCTURED, crit, (), (), checks, render or RenderSummary()))


def a1(render: RenderSummary) -> Verdict | JudgeFailure | None:
    crit = ANIMATED.criterion("A1")
    return JUDGE.judge(JudgeInput(ANIMATED, crit, (), (), PASSING_CHECKS, render))


def test_clean_sample_passes_f1() -> None:
    assert CLEAN_RENDER.status == "ok"
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
    blocked = RenderSummary.from_doc(
        {"blocked_requests": [{"url": "http://evil.test/x.png", "via": "route"}]}
    )
    v = f1(sample_text(), blocked)
    assert isinstance(v, Verdict) and v.status.value == "fail"
    assert v.evidence.artifact_ref == "render.json#blocked_requests"
    assert "evil.test" in v.evidence.description
    v = f1(sample_text(), RenderSummary(status="ok", script_executed=True))
    assert isinstance(v, Verdict) and v.status.value == "fail"
    # no render log, or a partial one: the static checks alone cannot confirm that nothing ran
    v = f1(sample_text(), None)
    assert isinstance(v, Verdict) and v.status.value == "uncertain"
    assert "no render log" in v.evidence.description
    partial = RenderSummary(status="incomplete", cause="render_timeout")
    v = f1(sample_text(), partial)
    assert isinstance(v, Verdict) and v.status.value == "uncertain"
    assert "render_timeout" in v.evidence.description
    # ...but a request attempted before the render broke is still proof
    leaked = RenderSummary(
        status="incomplete", cause="render_timeout", blocked_requests=("http://x.test/",)
    )
    v = f1(sample_text(), leaked)
    assert isinstance(v, Verdict) and v.status.value == "fail"


def test_missing_check_report_is_a_judge_error() -> None:
    crit = STRUCTURED.criterion("F1")
    result = JUDGE.judge(JudgeInput(STRUCTURED, crit, (), (), None, CLEAN_RENDER))
    assert isinstance(result, JudgeFailure) and result.cause == "no_checks"


def test_static_judge_decides_only_what_it_can() -> None:
    answered = {c.id for c in STRUCTURED.criteria if JUDGE.answers(STRUCTURED, c)}
    assert answered == {"F1"}
    assert {c.id for c in ANIMATED.criteria if JUDGE.answers(ANIMATED, c)} == {"F1", "A1"}
    still = RenderSummary.from_doc({"animation": {"detected": False, "kinds": []}})
    v = a1(still)
    assert isinstance(v, Verdict) and v.status.value == "fail"
    moving = RenderSummary.from_doc({"animation": {"detected": True, "kinds": ["smil"]}})
    assert a1(moving) is None
    partial = RenderSummary(status="incomplete", cause="render_timeout", animation_detected=False)
    assert a1(partial) is None
