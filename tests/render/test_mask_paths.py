"""The fast mask path (libspng decode, lookup-table owners, per-job encode cache, the PNG encoder
of :mod:`render.maskpng`, frame reuse for equal animated states) gives exactly the masks, frames
and geometry verdicts of the path it replaced (``mask_path="reference"``: one ``seek`` per
timestamp, the original decode and Pillow encode, no reuse), on the bundled drawings, the test
drawing of ``test_masks.py`` and drawings whose parts overlap, stroke and fade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judges
from judges.geometry.judge import GeometryJudge
from sandbox import WorkerPool
from service.pipeline.render_client import RenderOutput
from tasks import TaskSpec, bundled_registry
from tests.render.conftest import STRUCTURED, animated_task, render, task
from tests.render.test_masks import IDS, SVG

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
MOVING = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
 <rect id="a" x="100" y="100" width="200" height="200" fill="#f00">
  <animate attributeName="x" values="100;500;100" dur="2s" repeatCount="indefinite"/></rect>
 <g id="b"><circle cx="400" cy="300" r="60" fill="#0f0"/>
  <animateTransform attributeName="transform" type="rotate" from="0 400 400" to="360 400 400"
   dur="2s" repeatCount="indefinite"/></g>
 <rect id="c" x="300" y="250" width="50" height="50" fill="#00f" opacity="0.5"
  style="animation: fade 2s linear infinite"/>
 <style>@keyframes fade { from { opacity: 0 } to { opacity: 1 } }</style>
</svg>"""

OVERLAPPING = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
 <g id="outer"><rect id="base" x="50" y="50" width="400" height="300" fill="#888"/>
  <circle id="inner" cx="250" cy="200" r="90" fill="none" stroke="#123" stroke-width="40"/>
  <path id="wedge" d="M100 300 L400 80 L420 320 Z" fill="#f80" opacity="0.3"/></g>
 <rect x="200" y="150" width="120" height="60" fill="#fff"/>
 <use href="#wedge" x="250" y="120"/>
 <text id="label" x="480" y="420" font-size="60" fill="#000">regua</text>
 <line id="stroke" x1="40" y1="560" x2="760" y2="380" stroke="#0a0" stroke-width="25"
  stroke-linecap="round" stroke-dasharray="60 30"/>
</svg>"""
"""Parts under other parts and under a non-part, a stroke-only part, a translucent part cloned by
``<use>``, text and a dashed stroke: the cases where visible and alone masks differ."""
OVERLAPPING_IDS = ["outer", "base", "inner", "wedge", "label", "stroke"]


def _cases() -> list[tuple[str, TaskSpec, str]]:
    manifest = json.loads((SAMPLES / "manifest.json").read_text())
    registry = bundled_registry()
    cases = [
        (entry["file"], registry.get(entry["task"]), (SAMPLES / entry["file"]).read_text())
        for entry in manifest
        if entry["file"].endswith(".svg") and registry.get(entry["task"]).output.required_ids
    ]
    cases.append(("test_masks.SVG", task(STRUCTURED, output={"required_ids": IDS}), SVG))
    overlapping = task(STRUCTURED, output={"required_ids": OVERLAPPING_IDS})
    cases.append(("overlapping parts, strokes, opacity, use", overlapping, OVERLAPPING))
    moving = animated_task(times_hz=4.0, observe_s=4.0, required_ids=["a", "b", "c"])
    cases.append(("moving (SMIL + CSS, a 2 s loop over 4 s)", moving, MOVING))
    return cases


CASES = _cases()


def _verdicts(out: RenderOutput, spec: TaskSpec) -> dict[str, str]:
    judge = GeometryJudge(judges.get_profile("geometry@1"))
    verdicts: dict[str, str] = {}
    for criterion in spec.criteria:
        if criterion.applicable and judge.answers(spec, criterion):
            result = judge.judge(judges.JudgeInput(spec, criterion, out.frames(), out.masks()))
            if isinstance(result, judges.Verdict):
                verdicts[criterion.id] = f"{result.status.value}: {result.evidence.description}"
    return verdicts


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_fast_mask_path_equals_the_reference(render_pool: WorkerPool, name: str) -> None:
    _, spec, svg = next(c for c in CASES if c[0] == name)
    fast = render(render_pool, svg, spec)
    reference = render(render_pool, svg, spec, mask_path="reference")
    assert fast.status == reference.status == "ok", (fast.detail, reference.detail)
    assert [(f.time_s, f.sha256) for f in fast.log.frames] == [
        (f.time_s, f.sha256) for f in reference.log.frames
    ]
    assert [(m.name, m.sha256, m.pixels) for m in fast.log.masks] == [
        (m.name, m.sha256, m.pixels) for m in reference.log.masks
    ]
    assert len(fast.log.masks) == len(spec.timestamps()) * 2 * len(spec.output.required_ids)
    assert _verdicts(fast, spec) == _verdicts(reference, spec)
    reuse = fast.log.model_extra["frame_reuse"] if fast.log.model_extra else {}
    if name.startswith("moving"):  # a 2 s loop seen for 4 s: the second loop is reused
        assert reuse["reused"] >= 4, reuse
