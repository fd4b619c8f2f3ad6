"""Geometry judge over time (A1 crank rotation, A2 contact held) on animated variants of the
structured pelican: crank, pedals and feet turn together about the crank axle (390, 440)."""

from __future__ import annotations

import pytest
from lxml import etree

from judges import (
    CheckSummary,
    EvalInput,
    JudgeInput,
    RenderSummary,
    Verdict,
    evaluate,
    get_profile,
    panel_for_family,
)
from judges.geometry.judge import GeometryJudge
from tasks import bundled_registry
from tests.helpers import perturb as pt
from tests.helpers.maskrender import MaskRenderer

pytestmark = pytest.mark.browser
TASK = bundled_registry().get("pelican-bicycle-animated@1")
JUDGE = GeometryJudge(get_profile("geometry@1"))
PARTS = (
    "crank",
    "pedal-left",
    "pedal-right",
    "foot-left",
    "foot-right",
    "wheel-front",
    "wheel-rear",
)
TIMES = tuple(i * 0.5 for i in range(9))  # 0 .. 4 s; the judge works on whatever times it gets
TURNING = ("crank", "pedal-left", "pedal-right", "foot-left", "foot-right")


def spin(parts: tuple[str, ...], seconds: float, reverse: bool = False) -> pt.Edit:
    def edit(root: etree._Element) -> None:
        for part in parts:
            anim = etree.SubElement(pt.by_id(root, part), pt.q("animateTransform"))
            a, b = ("360", "0") if reverse else ("0", "360")
            attrs = {
                "attributeName": "transform",
                "type": "rotate",
                "from": f"{a} 390 440",
                "to": f"{b} 390 440",
                "dur": f"{seconds}s",
                "repeatCount": "indefinite",
            }
            for k, v in attrs.items():
                anim.set(k, v)

    return edit


NEEDS = {
    "A1": ("crank", "pedal-left", "pedal-right"),
    "A2": ("pedal-left", "pedal-right", "foot-left", "foot-right", "wheel-front", "wheel-rear"),
}


def judge(renderer: MaskRenderer, svg: str, criterion: str) -> Verdict:
    frames, masks = renderer.render(svg, NEEDS[criterion], TIMES)
    inp = JudgeInput(TASK, TASK.criterion(criterion), tuple(frames), tuple(masks))
    result = JUDGE.judge(inp)
    assert isinstance(result, Verdict), result
    return result


@pytest.mark.parametrize(
    ("seconds", "reverse", "expected", "revs"),
    [
        (4.0, False, "pass", 1.0),
        (4.0, True, "pass", 1.0),
        (3.0, False, "uncertain", 4 / 3),
        (2.0, False, "fail", 2.0),
    ],
)
def test_a1_crank_rate(
    masks: MaskRenderer, seconds: float, reverse: bool, expected: str, revs: float
) -> None:
    v = judge(masks, pt.build(spin(TURNING, seconds, reverse)), "A1")
    assert v.status.value == expected
    assert v.details["revolutions_per_loop"] == pytest.approx(revs, abs=0.05)
    assert v.details["angle_source"] == "pedals"
    assert v.evidence.artifact_ref == "mask-4000-crank-alone.png"


def test_a1_no_rotation_fails(masks: MaskRenderer) -> None:
    v = judge(masks, pt.sample_text(), "A1")
    assert v.status.value == "fail"
    assert v.details["revolutions_per_loop"] == pytest.approx(0.0, abs=0.02)


def test_a2_contact_held_while_turning(masks: MaskRenderer) -> None:
    v = judge(masks, pt.build(spin(TURNING, 4.0)), "A2")
    assert v.status.value == "pass"
    assert len(v.details["samples"]) == len(TIMES)


def test_a2_first_break_time_is_evidence(masks: MaskRenderer) -> None:
    # the left foot stays put while its pedal turns away from it
    svg = pt.build(spin(("crank", "pedal-left", "pedal-right", "foot-right"), 4.0))
    v = judge(masks, svg, "A2")
    assert v.status.value == "fail"
    first = next(s for s in v.details["samples"] if s["status"] != "pass")["time_s"]
    assert 0.0 < first == v.evidence.time_s == v.details["first_break_s"]
    assert v.evidence.artifact_ref == f"mask-{round(first * 1000)}-foot-left-visible.png"
    assert v.details["samples"][0]["status"] == "pass"
    assert f"t={first:g}s" in v.evidence.description


def test_static_drawing_on_animated_task_fails_a1_through_evaluate(masks: MaskRenderer) -> None:
    frames, mk = masks.render(pt.sample_text(), TASK.output.required_ids, (0.0, 1.0, 2.0))
    render = RenderSummary.from_doc(
        {"animation": {"detected": False, "kinds": []}, "blocked_requests": []}
    )
    checks = CheckSummary.from_doc(
        {"status": "pass", "checks": [], "extraction": {"status": "found"}}
    )
    inp = EvalInput(TASK, checks, render, tuple(frames), tuple(mk))
    result = evaluate(inp, panel_for_family(TASK.family), None)
    a1 = result.criterion("A1")
    assert a1.status == "fail"  # the static rule votes without calibration
    assert {(v.judge_profile_id, v.eligible) for v in a1.votes} == {
        ("static@1", True),
        ("geometry@1", False),
    }
    assert result.outcome.status == "fail" and "A1: fail" in result.outcome.reasons
    r2 = next(v for v in result.verdicts if v.criterion == "R2")
    assert r2.evidence.time_s == 0.0  # animated task: evidence is located in time
