"""The experiment file: what a user sees for each bad file, and the resolved plan."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from regua.errors import ExperimentFileError
from service.experiments.builtin import _params
from service.experiments.plan import cases, resolve_plan
from service.experiments.spec import load_experiment_file, load_experiment_text
from tasks import bundled_registry

GOOD = """
id: prompts
seed: 5
repeats: 2
items: [pelican-bicycle-animated, pelican-bicycle-structured@1]
prompts:
  terse: "{prompt} Only the SVG."
arms:
  - name: base
    model: {api: mock, model: m1}
  - name: terse
    model: {api: mock, model: m1}
    prompt: terse
  - name: v2
    model: {api: mock, model: m1}
    task_version: 2
"""


def test_a_good_file_resolves_every_item_to_a_frozen_version() -> None:
    spec = load_experiment_text(GOOD)
    plan = resolve_plan(spec, bundled_registry())
    refs = {a.name: a.refs for a in plan.arms}
    assert refs["base"] == {
        "pelican-bicycle-animated": "pelican-bicycle-animated@2",
        "pelican-bicycle-structured@1": "pelican-bicycle-structured@1",
    }
    assert refs["v2"]["pelican-bicycle-structured@1"] == "pelican-bicycle-structured@2"
    assert refs["v2"]["pelican-bicycle-animated"] == "pelican-bicycle-animated@2"
    assert plan.arms[1].prompt_template == "{prompt} Only the SVG."
    assert len(cases(plan)) == 3 * 2 * 2
    assert spec.content_hash() == load_experiment_text(GOOD).content_hash()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id: x\narms: []\nitems: [a]", "(top level)|arms: List should have at least 1 item"),
        (
            "id: x\nitems: [a]\narms:\n  - name: a\n    model: {api: gpt, model: m}",
            "arms.0.model.api: Input should be 'openai', 'anthropic' or 'mock'",
        ),
        (
            "id: x\nitems: [a]\nrepeats: 0\narms:\n  - {name: a, model: {api: mock, model: m}}",
            "repeats: Input should be greater than or equal to 1",
        ),
        (
            "id: x\narms:\n  - {name: a, model: {api: mock, model: m}}",
            "give exactly one of 'items' \\(task ids\\) or 'family'",
        ),
        (
            "id: x\nitems: [a]\narms:\n  - {name: a, model: {api: mock, model: m}, prompt: p}",
            "arm 'a' names prompt 'p'; prompts: \\(none\\)",
        ),
        (
            "id: x\nitems: [a]\ncolour: red\narms:\n  - {name: a, model: {api: mock, model: m}}",
            "colour: Extra inputs are not permitted",
        ),
        ("id: [x", "not valid YAML"),
        ("- just a list", "an experiment file is a mapping"),
    ],
)
def test_a_bad_file_names_the_field(text: str, message: str) -> None:
    with pytest.raises(ExperimentFileError, match=message):
        load_experiment_text(text, "exp.yaml")


def test_an_unknown_task_or_version_is_named_with_its_arm() -> None:
    text = GOOD.replace("task_version: 2", "task_version: 9")
    with pytest.raises(ExperimentFileError, match=r"arms\.2 \(v2\): unknown task "):
        resolve_plan(load_experiment_text(text), bundled_registry())


def test_a_panel_of_another_family_is_refused_before_anything_runs() -> None:
    text = GOOD + "panel: no-such-panel@1\n"
    with pytest.raises(ExperimentFileError, match=r"arms\.0 \(base\): .*no-such-panel@1"):
        resolve_plan(load_experiment_text(text), bundled_registry())


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ExperimentFileError, match="cannot read the experiment file"):
        load_experiment_file(tmp_path / "nope.yaml")


def test_an_arm_names_its_provider_and_files_without_one_keep_their_hash() -> None:
    named = GOOD.replace(
        "model: {api: mock, model: m1}\n    prompt:",
        "model: {api: mock, model: m1, provider: acme-lab}\n    prompt:",
    )
    assert named != GOOD
    spec = load_experiment_text(named)
    assert _params(spec.arms[1].model).vendor() == "acme-lab"
    assert _params(spec.arms[0].model).vendor() == "mock"
    assert spec.content_hash() != load_experiment_text(GOOD).content_hash()
    # a file without providers hashes as before the field existed (no provider key at all)
    doc = load_experiment_text(GOOD).model_dump(mode="json")
    for arm in doc["arms"]:
        del arm["model"]["provider"], arm["revise"], arm["revise_findings"]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    assert load_experiment_text(GOOD).content_hash() == hashlib.sha256(text.encode()).hexdigest()
