"""Task specs: the bundled tasks validate, versions are frozen, the CLI lists and shows them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from regua.errors import TaskError, TaskIntegrityError, UnknownTaskError
from service.cli import app
from tasks import CriterionKind, Mode, TaskRegistry, bundled_registry, load_task_text, parse_ref
from tasks.registry import bundled_spec_texts

STRUCTURED_IDS = {
    "pelican", "body", "wing-left", "wing-right", "foot-left", "foot-right", "bicycle",
    "wheel-front", "wheel-rear", "frame", "saddle", "handlebar", "crank", "pedal-left",
    "pedal-right",
}  # fmt: skip


def test_three_bundled_tasks_with_their_acceptance_tables() -> None:
    registry = bundled_registry()
    assert registry.refs() == [
        "pelican-bicycle-animated@1",
        "pelican-bicycle-static@1",
        "pelican-bicycle-structured@1",
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
