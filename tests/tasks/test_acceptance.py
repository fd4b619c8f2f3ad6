"""Issue 16 part 5: spec-level acceptance checks (spec-valid, criteria-stated)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.acceptance import (
    AcceptanceSubject,
    CriteriaStated,
    SpecValid,
    key_terms,
    outcome_lines,
    run_acceptance,
)
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
        "every applicable criterion is stated (A, Q1 not_applicable)",
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
    assert one[0] == "fail" and two[0] == "fail"
    failing_one = {part.split(":")[0] for part in one[1].split("; ")}
    failing_two = {part.split(":")[0] for part in two[1].split("; ")}
    assert {"P1", "R1", "R2"} <= failing_one
    assert failing_two == {"Q1"}  # the descriptive criterion is asked nowhere in the prompt
    assert "mark it applicable: false" in two[1]


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
