"""Geometry judge on synthetic masks drawn with OpenCV (no browser)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from judges import JudgeFailure, JudgeInput, MaskImage, Verdict, get_profile
from judges.geometry.judge import PARTS, GeometryJudge
from judges.geometry.measure import Region, unwrap_degrees
from tasks import bundled_registry

STRUCTURED = bundled_registry().get("pelican-bicycle-structured@1")
STATIC = bundled_registry().get("pelican-bicycle-static@1")
JUDGE = GeometryJudge(get_profile("geometry@1"))
W, H = 400, 300


def png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return bytes(buf.tobytes())


def scene(foot_gap_px: int, wheel_radius: int = 50) -> tuple[MaskImage, ...]:
    """Wheels of diameter 2r+1; each foot a rectangle ``foot_gap_px`` above its pedal."""
    layers: dict[str, np.ndarray] = {p: np.zeros((H, W), np.uint8) for p in PARTS}
    cv2.circle(layers["wheel-rear"], (100, 200), wheel_radius, 255, 4)
    cv2.circle(layers["wheel-front"], (300, 200), wheel_radius, 255, 4)
    for side, x in (("left", 180), ("right", 220)):
        cv2.rectangle(layers[f"pedal-{side}"], (x, 220), (x + 12, 224), 255, -1)
        top = 220 - foot_gap_px - 1
        cv2.rectangle(layers[f"foot-{side}"], (x, top - 30), (x + 10, top), 255, -1)
    return tuple(
        MaskImage(0.0, part, kind, png(layer), f"mask-0-{part}-{kind}.png")
        for part, layer in layers.items()
        for kind in ("visible", "alone")
    )


def r2(masks: tuple[MaskImage, ...]) -> Verdict | JudgeFailure | None:
    inp = JudgeInput(STRUCTURED, STRUCTURED.criterion("R2"), (), masks)
    return JUDGE.judge(inp)


@pytest.mark.parametrize(
    ("gap", "radius", "expected"),
    [(0, 50, "pass"), (2, 50, "pass"), (5, 50, "uncertain"), (12, 50, "fail"), (5, 100, "pass")],
)
def test_gap_is_relative_to_the_wheel_diameter(gap: int, radius: int, expected: str) -> None:
    v = r2(scene(gap, radius))
    assert isinstance(v, Verdict)
    diameter = v.details["wheel_diameter_px"]
    assert diameter == pytest.approx(2 * radius + 5, abs=2)  # 4 px rim
    assert v.details["gap_ratio"]["left"] == pytest.approx(gap / diameter, abs=0.002)
    assert v.status.value == expected


def test_region_measurements() -> None:
    mask = np.zeros((50, 50), bool)
    mask[10:20, 5:45] = True
    region = Region(mask)
    assert region.pixels == 400 and region.bbox == (5, 10, 44, 19)
    assert region.extent == pytest.approx(40, abs=1)
    assert region.orientation_deg == pytest.approx(0, abs=1)
    assert unwrap_degrees([170, -170, -150], 360) == [170, 190, 210]


def test_missing_or_broken_masks_are_judge_errors() -> None:
    failure = r2(())
    assert isinstance(failure, JudgeFailure) and failure.cause == "no_masks"
    broken = tuple(
        MaskImage(m.time_s, m.part, m.kind, b"not a png", m.artifact_ref)
        if m.part == "foot-left"
        else m
        for m in scene(0)
    )
    failure = r2(broken)
    assert isinstance(failure, JudgeFailure) and failure.cause == "bad_mask"
    assert "mask-0-foot-left" in failure.detail


def test_answers_only_structured_geometric_criteria() -> None:
    assert {c.id for c in STRUCTURED.criteria if JUDGE.answers(STRUCTURED, c)} == {
        "B1",
        "B2",
        "R1",
        "R2",
        "R3",
    }
    assert not any(JUDGE.answers(STATIC, c) for c in STATIC.criteria)  # no part ids to measure


def motion_masks(angles_deg: list[float], step_s: float) -> tuple[MaskImage, ...]:
    """Crank-centred pedals at the given angles (degrees) at successive times."""
    out: list[MaskImage] = []
    for i, angle in enumerate(angles_deg):
        t = i * step_s
        for side, offset in (("left", 180.0), ("right", 0.0)):
            img = np.zeros((H, W), np.uint8)
            a = np.radians(angle + offset)
            x, y = int(200 + 40 * np.cos(a)), int(150 + 40 * np.sin(a))
            cv2.rectangle(img, (x - 5, y - 2), (x + 5, y + 2), 255, -1)
            ref = f"mask-{round(t * 1000)}-pedal-{side}-alone.png"
            out.append(MaskImage(t, f"pedal-{side}", "alone", png(img), ref))
    return tuple(out)


ANIMATED = bundled_registry().get("pelican-bicycle-animated@1")


@pytest.mark.parametrize(
    ("step_deg", "expected"),
    [(22.5, "pass"), (-22.5, "pass"), (30.0, "uncertain"), (45.0, "fail"), (0.0, "fail")],
)
def test_a1_rotation_rate_from_pedal_positions(step_deg: float, expected: str) -> None:
    # samples every 0.25 s; 22.5 degrees per sample = one turn per 4 s loop
    masks = motion_masks([i * step_deg for i in range(17)], 0.25)
    v = JUDGE.judge(JudgeInput(ANIMATED, ANIMATED.criterion("A1"), (), masks))
    assert isinstance(v, Verdict) and v.status.value == expected
    assert v.details["revolutions_per_loop"] == pytest.approx(abs(step_deg) / 22.5, abs=0.05)


def test_a1_too_fast_to_follow_is_uncertain() -> None:
    masks = motion_masks([i * 170.0 for i in range(9)], 0.25)
    v = JUDGE.judge(JudgeInput(ANIMATED, ANIMATED.criterion("A1"), (), masks))
    assert isinstance(v, Verdict) and v.status.value == "uncertain"
    assert "too far" in v.evidence.description
