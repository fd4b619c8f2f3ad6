"""Task specs: the bundled tasks validate, versions are frozen, the CLI lists and shows them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from regua.errors import TaskError, TaskIntegrityError, UnknownTaskError
from service.cli import app
from tasks import (
    CriterionKind,
    Mode,
    TaskRegistry,
    TaskSpec,
    bundled_registry,
    load_task_text,
    parse_ref,
)
from tasks.registry import BUNDLED_HASHES, bundled_spec_texts, check_pinned

STRUCTURED_IDS = {
    "pelican",
    "body",
    "wing-left",
    "wing-right",
    "foot-left",
    "foot-right",
    "bicycle",
    "wheel-front",
    "wheel-rear",
    "frame",
    "saddle",
    "handlebar",
    "crank",
    "pedal-left",
    "pedal-right",
}


def test_bundled_tasks_with_their_acceptance_tables() -> None:
    registry = bundled_registry()
    assert registry.refs() == [
        "lighthouse-night-graded@1",
        "pelican-bicycle-animated@1",
        "pelican-bicycle-animated@2",
        "pelican-bicycle-open@1",
        "pelican-bicycle-restricted@1",
        "pelican-bicycle-static@1",
        "pelican-bicycle-structured@1",
        "pelican-bicycle-structured@2",
    ]
    static = registry.get("pelican-bicycle-static@1")
    assert [c.id for c in static.criteria] == ["F1", "P1", "B1", "B2", "R1", "R2", "R3", "A", "Q1"]
    assert static.output.required_viewbox == "0 0 800 600"
    assert not any(static.output.allowed.model_dump().values())
    assert static.criterion("A").applicable is False
    assert static.criterion("Q1").kind is CriterionKind.OPTIONAL
    structured = registry.get("pelican-bicycle-structured@1")
    assert set(structured.output.required_ids) == STRUCTURED_IDS
    for name in STRUCTURED_IDS:
        assert name in structured.prompt


def test_animated_plan_covers_two_loops_with_boundary_samples() -> None:
    animated = bundled_registry().get("pelican-bicycle-animated@1")
    assert animated.mode is Mode.ANIMATED
    assert animated.output.allowed.animation and not animated.output.allowed.scripts
    assert {"A1", "A2"} <= {c.id for c in animated.criteria}
    times = animated.timestamps()
    assert times[0] == 0.0 and times[-1] == 8.0
    assert 4.0 in times and 3.95 in times and 4.05 in times  # loop boundary samples
    assert len(times) == len(set(times)) and list(times) == sorted(times)
    assert bundled_registry().get("pelican-bicycle-static@1").timestamps() == (0.0,)


def test_registered_version_is_immutable() -> None:
    name, text = bundled_spec_texts()[0]
    spec = load_task_text(text, name)
    registry = TaskRegistry([spec])
    registry.register(spec)  # same content: accepted
    assert registry.content_hash(spec.ref) == spec.content_hash()
    changed = spec.model_copy(update={"prompt": spec.prompt + " Also draw a fish."})
    with pytest.raises(TaskIntegrityError, match="new version"):
        registry.register(changed)
    assert registry.get(spec.ref).prompt == spec.prompt


def test_unknown_and_malformed_refs_list_known_tasks() -> None:
    registry = bundled_registry()
    with pytest.raises(UnknownTaskError) as info:
        registry.get("pelican-bicycle-static@9")
    assert "pelican-bicycle-static@1" in str(info.value)
    with pytest.raises(UnknownTaskError):
        registry.get("no-version")
    with pytest.raises(ValueError):
        parse_ref("x@y")


def test_invalid_spec_is_rejected_with_the_field() -> None:
    text = dict(bundled_spec_texts())["pelican-bicycle-static-1.yaml"]
    with pytest.raises(TaskError, match="pool"):
        load_task_text(text.replace("pool: core", "pool: somewhere"))
    with pytest.raises(TaskError, match="animation plan"):
        load_task_text(text.replace("mode: static", "mode: animated"))
    with pytest.raises(TaskError, match="YAML"):
        load_task_text("id: [unclosed")


def test_cli_lists_and_shows_tasks() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["tasks", "list", "--json"])
    assert listed.exit_code == 0
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {r["ref"] for r in rows} == set(bundled_registry().refs())
    shown = runner.invoke(app, ["tasks", "show", "pelican-bicycle-structured@1", "--json"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout)["output"]["required_viewbox"] == "0 0 800 600"
    missing = runner.invoke(app, ["tasks", "show", "nope@1"])
    assert missing.exit_code == 2
    assert "pelican-bicycle-static@1" in missing.stderr


FROZEN_V1 = {
    "pelican-bicycle-animated@1": (
        "f3e938c19cf89152ec0f01bacfcfa8e8e47b584d93bbb989d485e010712bb7bf"
    ),
    "pelican-bicycle-static@1": "070519c3f5ffb542834315c336e880cb568b6ef0390e67031c6248d0bacb3029",
    "pelican-bicycle-structured@1": (
        "7e91760194ad92b8ad7d8102e6b11158107cf70a2958a92df8fb0ceae72fe891"
    ),
}


def test_old_versions_stay_registered_and_frozen() -> None:
    registry = bundled_registry()
    for ref, digest in FROZEN_V1.items():
        assert registry.content_hash(ref) == digest  # released before issue 13: never edited
        assert BUNDLED_HASHES[ref] == digest
    assert set(BUNDLED_HASHES) == set(registry.refs())
    spec = registry.get("pelican-bicycle-static@1")
    edited = spec.model_copy(update={"title": "edited"})
    with pytest.raises(TaskIntegrityError, match="frozen"):
        check_pinned(edited)
    with pytest.raises(TaskIntegrityError, match="no pinned hash"):
        check_pinned(spec, pins={})


def test_latest_version_of_a_task() -> None:
    registry = bundled_registry()
    assert registry.latest("pelican-bicycle-structured").ref == "pelican-bicycle-structured@2"
    assert [s.version for s in registry.versions("pelican-bicycle-animated")] == [1, 2]
    with pytest.raises(UnknownTaskError):
        registry.latest("no-such-task")


def test_open_task_scores_only_what_its_sentence_implies() -> None:
    open_task = bundled_registry().get("pelican-bicycle-open@1")
    assert open_task.prompt == "Generate an SVG of a pelican riding a bicycle"
    necessary = [c.id for c in open_task.criteria if c.kind is CriterionKind.NECESSARY]
    assert necessary == ["F1", "P1", "B1", "R1"]
    assert [c.id for c in open_task.criteria if c.kind is CriterionKind.OPTIONAL] == ["Q1"]
    assert open_task.mode is Mode.STATIC and open_task.output.required_viewbox is None
    assert open_task.output.required_ids == ()
    # the prompt forbids nothing; only what cannot be part of one document stays out
    allowed = open_task.output.allowed
    assert allowed.scripts and allowed.animation and allowed.raster_images
    assert allowed.foreign_object and not allowed.external_resources
    static = bundled_registry().get("pelican-bicycle-static@1")
    assert open_task.render == static.render


# what each scored condition must say in the prompt (a criterion is scored only when asked)
STATED = {
    "P1": ("recognisable pelican", "throat pouch", "no extra legs"),
    "B1": ("mostly from the side", "both wheels", "saddle", "handlebar", "crank", "two pedals"),
    "B2": ("frame joins both wheel axles", "pedals are"),
    "R1": ("seated on the saddle",),
    "R2": ("each foot on its own pedal", "both contacts visible"),
    "R3": ("at least one wing", "on the handlebar"),
    "F1": ('viewBox="0 0 800 600"', "bitmaps", "external resources", "scripts", "foreignObject"),
}


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "ref",
    ["pelican-bicycle-restricted@1", "pelican-bicycle-structured@2", "pelican-bicycle-animated@2"],
)
def test_new_versions_state_every_scored_condition(ref: str) -> None:
    task = bundled_registry().get(ref)
    prompt = _flat(task.prompt)
    scored = {c.id for c in task.criteria if c.applicable}
    assert {"F1", "P1", "B1", "B2", "R1", "R2", "R3", "Q1"} <= scored
    for cid, phrases in STATED.items():
        for phrase in phrases:
            assert phrase in prompt, (ref, cid, phrase)
    if task.mode is Mode.STATIC:
        assert "static" in prompt and "animation" in prompt
        assert task.criterion("A").applicable is False
    else:
        assert {"A1", "A2"} <= scored
        assert "one full revolution every 4 seconds" in prompt
        assert "each foot stays on its own pedal at every moment" in prompt
    if ref != "pelican-bicycle-restricted@1":
        assert set(task.output.required_ids) == STRUCTURED_IDS
        for name in STRUCTURED_IDS:
            assert name in prompt
        assert "every id is required" in prompt
    else:
        assert task.output.required_ids == ()


def test_restricted_task_keeps_the_criterion_ids_of_the_static_task() -> None:
    registry = bundled_registry()
    restricted = registry.get("pelican-bicycle-restricted@1")
    static = registry.get("pelican-bicycle-static@1")
    assert [c.id for c in restricted.criteria] == [c.id for c in static.criteria]
    assert restricted.output == static.output and restricted.render == static.render


def test_the_render_cpu_budget_is_hash_neutral_at_its_default() -> None:
    """``output.max_render_cpu_s`` was added after release: at its default every bundled pin
    holds; any other value is part of the content hash (a new version)."""
    registry = bundled_registry()
    for ref in registry.refs():
        spec = registry.get(ref)
        assert spec.output.max_render_cpu_s == 20.0
        assert '"max_render_cpu_s"' not in spec.canonical_json()
        assert BUNDLED_HASHES[ref] == spec.content_hash()
    spec = registry.get("pelican-bicycle-static@1")
    wire = spec.to_wire()
    wire["output"]["max_render_cpu_s"] = 5.0
    changed = TaskSpec.model_validate(wire)
    assert changed.content_hash() != spec.content_hash()
    assert '"max_render_cpu_s":5.0' in changed.canonical_json()
