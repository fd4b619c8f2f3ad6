"""The fast mask path (libspng decode, lookup-table owners, per-job encode cache, frame reuse for
equal animated states) gives exactly the masks, frames and geometry verdicts of the path it
replaced (``mask_path="reference"``: one ``seek`` per timestamp, the original decode and encode,
no reuse), on the bundled drawings and the test drawings of ``test_masks.py``."""

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


def _cases() -> list[tuple[str, TaskSpec, str]]:
    manifest = json.loads((SAMPLES / "manifest.json").read_text())
    registry = bundled_registry()
    cases = [
        (entry["file"], registry.get(entry["task"]), (SAMPLES / entry["file"]).read_text())
        for entry in manifest
        if entry["file"].endswith(".svg") and registry.get(entry["task"]).output.required_ids
    ]
    cases.append(("test_masks.SVG", task(STRUCTURED, output={"required_ids": IDS}), SVG))
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
