"""Issue 16 acceptance: a flamingo-on-a-unicycle task written only as data gets geometry verdicts.

The task (``tests/fixtures/tasks``) declares its parts, the relation each criterion checks and
the wheel diameter as reference length. The geometry judge passes its hand-written reference
drawing; the perturbation generator, reading the same declaration, lifts a foot off its pedal
and the judge fails R2 while every other geometric verdict stays a pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judges import JudgeInput, Verdict, get_profile
from judges.geometry.judge import GeometryJudge
from judges.perturbation.declared_recipes import declared_recipes, geometric_criteria
from judges.perturbation.generate import perturb
from tasks import TaskSpec, load_task_file
from tests.helpers.maskrender import MaskRenderer

pytestmark = pytest.mark.browser
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"
TASK = load_task_file(FIXTURES / "flamingo-unicycle-structured-1.yaml")
REFERENCE = (FIXTURES / "flamingo-unicycle-reference.svg").read_text()
JUDGE = GeometryJudge(get_profile("geometry@1"))


def verdicts(renderer: MaskRenderer, task: TaskSpec, svg: str) -> dict[str, Verdict]:
    frames, masks = renderer.render(svg, task.output.required_ids)
    out: dict[str, Verdict] = {}
    for criterion in task.criteria:
        if JUDGE.answers(task, criterion):
            result = JUDGE.judge(JudgeInput(task, criterion, tuple(frames), tuple(masks)))
            assert isinstance(result, Verdict), result
            out[criterion.id] = result
    return out


def test_one_perturbation_set_per_necessary_geometric_criterion() -> None:
    recipes = declared_recipes(TASK)
    assert set(recipes) == set(geometric_criteria(TASK)) == {"B1", "B2", "R1", "R2"}
    for cid, recipe in recipes.items():
        variant = perturb(REFERENCE, recipe.perturbation_id, task=TASK, params=recipe.params)
        assert cid in variant.must_change and variant.expected[cid] == "fail"
        assert "P1" in variant.must_not_change  # recognition is not what the edit changes
        assert variant.svg != REFERENCE.encode()


def test_reference_passes_and_foot_off_the_pedal_fails(masks: MaskRenderer) -> None:
    ref = verdicts(masks, TASK, REFERENCE)
    assert {k: v.status.value for k, v in ref.items()} == dict.fromkeys(
        ("B1", "B2", "R1", "R2"), "pass"
    )
    assert ref["R2"].details["gap_ratio"] == {"left": 0.0, "right": 0.0}
    assert 185 <= ref["R2"].details["wheel_diameter_px"] <= 192  # r 90 + the 8 px stroke
    recipe = declared_recipes(TASK)["R2"]
    assert recipe.params["moves"] == [["foot-left", "pedal-left", "box"]]
    variant = perturb(REFERENCE, recipe.perturbation_id, task=TASK, params=recipe.params)
    moved = verdicts(masks, TASK, variant.svg.decode())
    assert moved["R2"].status.value == "fail"
    assert moved["R2"].details["gap_ratio"]["left"] > 0.15
    assert moved["R2"].details["gap_ratio"]["right"] == 0.0
    assert "foot-left-pedal-left gap" in moved["R2"].evidence.description
    for cid in variant.must_not_change:
        if cid in moved:
            assert moved[cid].status.value == "pass", (cid, moved[cid].evidence.description)
