"""Geometry judge on single-factor perturbations of the structured pelican (issue 5 acceptance).

Masks come from a test-only Playwright renderer (``maskrender.py``). Declared bands (profile
``geometry@1``): contact gap / wheel diameter <= 0.03 pass, <= 0.08 uncertain, above fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from judges import JudgeInput, Verdict, get_profile
from judges.geometry.judge import STATIC_CRITERIA, GeometryJudge
from judges.geometry.measure import decode_mask
from tasks import bundled_registry
from tests.helpers import perturb as pt
from tests.helpers.maskrender import MaskRenderer

pytestmark = pytest.mark.browser
TASK = bundled_registry().get("pelican-bicycle-structured@1")
JUDGE = GeometryJudge(get_profile("geometry@1"))
_CACHE: dict[str, dict[str, Verdict]] = {}


def verdicts(renderer: MaskRenderer, svg: str, background: str = "#ffffff") -> dict[str, Verdict]:
    """Geometry verdicts for every static structured criterion of one drawing."""
    key = svg + background
    if key not in _CACHE:
        frames, masks = renderer.render(svg, TASK.output.required_ids, background=background)
        out: dict[str, Verdict] = {}
        for cid in STATIC_CRITERIA:
            inp = JudgeInput(TASK, TASK.criterion(cid), tuple(frames), tuple(masks))
            result = JUDGE.judge(inp)
            assert isinstance(result, Verdict), result
            out[cid] = result
        _CACHE[key] = out
    return _CACHE[key]


def statuses(v: dict[str, Verdict]) -> dict[str, str]:
    return {k: x.status.value for k, x in v.items()}


def left_gap(v: dict[str, Verdict]) -> Any:
    return v["R2"].details["gap_ratio"]["left"]


def test_sample_passes_every_geometric_criterion(masks: MaskRenderer) -> None:
    v = verdicts(masks, pt.sample_text())
    assert statuses(v) == dict.fromkeys(STATIC_CRITERIA, "pass")
    assert v["R2"].details["gap_ratio"] == {"left": 0.0, "right": 0.0}
    assert v["R2"].evidence.artifact_ref == "mask-0-foot-left-visible.png"
    assert v["R2"].evidence.time_s is None  # static task
    assert 185 <= v["R2"].details["wheel_diameter_px"] <= 192


@pytest.mark.parametrize(
    ("fraction", "expected", "low", "high"),
    [
        (0.00, "pass", 0.0, 0.005),
        (0.02, "pass", 0.012, 0.028),
        (0.05, "uncertain", 0.04, 0.06),
        (0.10, "fail", 0.09, 0.11),
        (0.20, "fail", 0.19, 0.21),
    ],
)
def test_foot_moved_away_lands_in_declared_band(
    masks: MaskRenderer, fraction: float, expected: str, low: float, high: float
) -> None:
    v = verdicts(masks, pt.build(pt.move_up("foot-left", fraction)))
    ratio = left_gap(v)
    assert low <= ratio <= high, ratio  # gap measured relative to the wheel diameter
    assert v["R2"].status.value == expected
    assert v["R2"].details["gap_ratio"]["right"] == 0.0
    others = {k: s for k, s in statuses(v).items() if k != "R2"}
    assert others == dict.fromkeys(others, "pass")


def test_same_move_in_a_scaled_drawing_gives_the_same_band(masks: MaskRenderer) -> None:
    # the scale comes from the wheels of the same image, never from a fixed pixel count
    for fraction, expected in ((0.05, "uncertain"), (0.10, "fail")):
        svg = pt.build(pt.move_up("foot-left", fraction), pt.nested_transforms)
        v = verdicts(masks, svg)
        assert v["R2"].details["wheel_diameter_px"] < 160
        assert v["R2"].status.value == expected, left_gap(v)


@pytest.mark.parametrize(
    ("name", "edit", "why"),
    [
        ("clip path", pt.clip_away("foot-left"), "paints no pixel"),
        ("occluder", pt.occlude(330, 270, 50, 146), "not visible"),
        ("display none", pt.style("foot-left", "display:none"), "paints no pixel"),
        ("opacity 0", pt.style("foot-left", "opacity:0"), "paints no pixel"),
    ],
)
def test_hidden_foot_is_never_a_visible_contact(
    masks: MaskRenderer, name: str, edit: pt.Edit, why: str
) -> None:
    v = verdicts(masks, pt.build(edit))
    assert v["R2"].status.value == "fail", name
    assert why in v["R2"].evidence.description
    assert v["R2"].evidence.artifact_ref == "mask-0-foot-left-visible.png"
    assert v["R2"].details["gap_ratio"]["left"] is None


def test_occluded_foot_keeps_its_bounding_box_but_fails(masks: MaskRenderer) -> None:
    _, mk = masks.render(pt.build(pt.occlude(330, 270, 50, 146)), ("foot-left",))
    pixels = {m.kind: int(decode_mask(m.png).sum()) for m in mk}
    assert pixels["alone"] > 500 and pixels["visible"] == 0  # drawn, but covered


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("wheel as path", pt.wheel_as_path),
        ("wheel via use", pt.wheel_via_use),
        ("nested transforms", pt.nested_transforms),
        ("mirror", pt.mirror),
        ("background", pt.background),
    ],
)
def test_must_not_change_perturbations_change_nothing(
    masks: MaskRenderer, name: str, edit: pt.Edit
) -> None:
    base = verdicts(masks, pt.sample_text())
    v = verdicts(masks, pt.build(edit))
    assert statuses(v) == statuses(base), name
    assert left_gap(v) <= 0.01 and v["R2"].details["gap_ratio"]["right"] <= 0.01


def test_page_background_changes_nothing(masks: MaskRenderer) -> None:
    assert statuses(verdicts(masks, pt.sample_text(), "#000000")) == dict.fromkeys(
        STATIC_CRITERIA, "pass"
    )


def test_b1_fails_for_a_squashed_wheel_and_a_missing_pedal(masks: MaskRenderer) -> None:
    squashed = pt.build(
        pt.style("wheel-rear", "transform: scale(1, 0.5); transform-origin: 250px 430px")
    )
    v = verdicts(masks, squashed)
    assert v["B1"].status.value == "fail"
    assert v["B1"].details["wheel-rear-roundness"] < 0.6
    v = verdicts(masks, pt.build(pt.style("pedal-right", "display:none")))
    assert v["B1"].status.value == "fail" and "pedal-right" in v["B1"].evidence.description
    assert v["R2"].status.value == "fail"


def test_r1_r3_b2_detect_broken_relations(masks: MaskRenderer) -> None:
    v = verdicts(
        masks,
        pt.build(
            pt.move_up("body", 0.2), pt.move_up("wing-left", 0.2), pt.move_up("wing-right", 0.2)
        ),
    )
    assert v["R1"].status.value == "fail"
    assert v["R3"].status.value == "fail"
    v = verdicts(masks, pt.build(pt.move_up("frame", 0.2)))
    assert v["B2"].status.value == "fail"
    assert "wheel" in v["B2"].evidence.description
