"""Issue 16 part 5: spec-level acceptance checks (spec-valid, criteria-stated)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tasks.acceptance import (
    AcceptanceSubject,
    CriteriaStated,
    SpecValid,
    key_terms,
    outcome_lines,
    run_acceptance,
    unstated,
)
from tasks.model import Criterion, CriterionKind
from tasks.registry import bundled_spec_texts

FLAMINGO = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
FLAMINGO_TEXT = (FLAMINGO / "flamingo-unicycle-structured-1.yaml").read_text()
CHECKS = (SpecValid(), CriteriaStated())


def outcomes(text: str) -> dict[str, tuple[str, str]]:
    subject = AcceptanceSubject.from_text(text, "task.yaml")
    return {o.check: (o.status, o.reason) for o in run_acceptance(subject, CHECKS)}


def bundled(name: str) -> str:
    return dict(bundled_spec_texts())[name]


def test_flamingo_passes_and_names_the_exempt_criteria() -> None:
    got = outcomes(FLAMINGO_TEXT)
    assert got["spec-valid"] == ("pass", "flamingo-unicycle-structured@1 validates")
    assert got["criteria-stated"] == (
        "pass",
        "every applicable necessary criterion is stated (A, Q1 not_applicable)",
    )


def test_a_missing_states_phrase_fails_naming_it() -> None:
    doc = yaml.safe_load(FLAMINGO_TEXT)
    doc["criteria"][5]["states"] = ["each foot on its own pedal", "both feet strapped in"]
    status, reason = outcomes(yaml.safe_dump(doc))["criteria-stated"]
    assert status == "fail"
    assert reason == "R2: phrases not in the prompt: ['both feet strapped in']"


def test_key_terms_rule_tells_structured_1_from_structured_2() -> None:
    # version 1 asked only for the drawing, the format and the ids; version 2 states each rule
    one = outcomes(bundled("pelican-bicycle-structured-1.yaml"))["criteria-stated"]
    two = outcomes(bundled("pelican-bicycle-structured-2.yaml"))["criteria-stated"]
    assert one[0] == "fail" and two[0] == "pass", (one, two)
    failing_one = {part.split(":")[0] for part in one[1].split("; ")}
    assert failing_one == {"P1", "B2", "R2"}
    assert "mark it applicable: false" in one[1]
    # the descriptive criterion is asked nowhere in the prompt, and need not be
    assert two[1].endswith("(A not_applicable; Q1 optional: descriptive, need not be asked for)")


@pytest.mark.parametrize(
    "name",
    [
        "pelican-bicycle-open-1.yaml",
        "pelican-bicycle-restricted-1.yaml",
        "pelican-bicycle-structured-2.yaml",
        "pelican-bicycle-animated-2.yaml",
    ],
)
def test_the_honest_bundled_tasks_state_what_they_score(name: str) -> None:
    status, reason = outcomes(bundled(name))["criteria-stated"]
    assert status == "pass", reason


def test_the_retired_static_task_fails_on_what_its_prompt_never_asks() -> None:
    status, reason = outcomes(bundled("pelican-bicycle-static-1.yaml"))["criteria-stated"]
    assert status == "fail"
    assert {part.split(":")[0] for part in reason.split("; ")} == {
        "P1",
        "B1",
        "B2",
        "R1",
        "R2",
        "R3",
    }


def test_a_judgement_word_is_not_a_condition_and_a_definition_is_not_asked() -> None:
    # "recognisable" says how a judge decides; asking for "a pelican" asks for a recognisable one
    assert key_terms("Is there a recognisable pelican?") == ("pelican",)
    # what follows "that is" (or sits in parentheses) defines the condition, it adds none
    assert key_terms(
        "Is the pelican riding the bicycle, that is, supported by the bicycle in a riding posture?"
    ) == ("pelican", "riding", "bicycle")
    assert key_terms("Is the body seated on the saddle (not floating above it)?") == (
        "body",
        "seated",
        "saddle",
    )
    # "turns" states "turn" (a four-letter term matches a longer prompt word)
    assert unstated(_criterion("Does the crank turn?"), "The crank turns.") is None


def _criterion(question: str) -> Criterion:
    return Criterion(id="A1", kind=CriterionKind.NECESSARY, question=question)


def test_the_delivery_rules_are_stated_by_the_output_constraints() -> None:
    doc = yaml.safe_load(bundled("pelican-bicycle-restricted-1.yaml"))
    assert outcomes(yaml.safe_dump(doc))["criteria-stated"][0] == "pass"
    doc["prompt"] = doc["prompt"].replace("scripts, ", "").replace('="0 0 800 600"', "")
    status, reason = outcomes(yaml.safe_dump(doc))["criteria-stated"]
    assert status == "fail"
    assert reason == (
        "F1: the prompt does not state viewBox '0 0 800 600', that scripts are forbidden"
    )


def test_key_terms_skip_short_and_function_words() -> None:
    assert key_terms("Is each foot on its own pedal?") == ("foot", "pedal")
    assert key_terms("Does the seat-post join the wheel?") == ("seat", "post", "join", "wheel")


def test_invalid_spec_fails_and_later_checks_skip() -> None:
    got = outcomes("id: x\nversion: one\n")
    assert got["spec-valid"][0] == "fail"
    assert "task.yaml: invalid task spec" in got["spec-valid"][1]
    assert got["criteria-stated"] == ("skip", "the spec does not validate (see spec-valid)")
    lines = outcome_lines(run_acceptance(AcceptanceSubject.from_text("[", "t.yaml"), CHECKS))
    assert lines[0].startswith("FAIL spec-valid: t.yaml: not valid YAML")
    assert lines[1].startswith("SKIP criteria-stated:")
