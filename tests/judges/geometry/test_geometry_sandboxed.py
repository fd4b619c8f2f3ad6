"""Cross-check: the geometry judge on masks from the real sandboxed renderer (``render_pool``).

The perturbation suite runs on the test-only renderer; this samples the same perturbations
through ``service.pipeline.render_client`` and expects the same bands.
"""

from __future__ import annotations

from typing import Any

import pytest

from judges import JudgeInput, MaskImage, Verdict, get_profile
from judges.geometry.judge import STATIC_CRITERIA, GeometryJudge
from tasks import bundled_registry
from tests.helpers import perturb as pt

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
TASK = bundled_registry().get("pelican-bicycle-structured@1")
JUDGE = GeometryJudge(get_profile("geometry@1"))
ALL_PASS = dict.fromkeys(STATIC_CRITERIA, "pass")


def sandboxed(pool: Any, svg: str) -> dict[str, Verdict]:
    from service.pipeline.render_client import render_artifact

    out = render_artifact(svg, TASK, pool)
    assert out.status == "ok", out.detail
    masks = out.masks()
    assert masks and all(isinstance(m, MaskImage) for m in masks)
    render = out.log.summary()
    result: dict[str, Verdict] = {}
    for cid in STATIC_CRITERIA:
        v = JUDGE.judge(JudgeInput(TASK, TASK.criterion(cid), out.frames(), masks, render=render))
        assert isinstance(v, Verdict), v
        result[cid] = v
    return result


@pytest.mark.parametrize(
    ("name", "edits", "r2"),
    [
        ("sample", (), "pass"),
        ("move 2%", (pt.move_up("foot-left", 0.02),), "pass"),
        ("move 5%", (pt.move_up("foot-left", 0.05),), "uncertain"),
        ("move 20%", (pt.move_up("foot-left", 0.20),), "fail"),
        ("occluder", (pt.occlude(330, 270, 50, 146),), "fail"),
        ("clip path", (pt.clip_away("foot-left"),), "fail"),
        ("opacity 0", (pt.style("foot-left", "opacity:0"),), "fail"),
        ("wheel via use", (pt.wheel_via_use,), "pass"),
        ("mirror", (pt.mirror,), "pass"),
        ("nested transforms", (pt.nested_transforms,), "pass"),
    ],
)
def test_real_renderer_lands_in_the_same_bands(
    render_pool: Any, name: str, edits: tuple[pt.Edit, ...], r2: str
) -> None:
    v = sandboxed(render_pool, pt.build(*edits))
    assert v["R2"].status.value == r2, (name, dict(v["R2"].details))
    assert {k: x.status.value for k, x in v.items() if k != "R2"} == {
        k: s for k, s in ALL_PASS.items() if k != "R2"
    }, name
