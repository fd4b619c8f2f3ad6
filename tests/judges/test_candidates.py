"""Candidate judges (pure part): four wordings of one vision judge, differing in nothing else,
written as a judge file that parses back to the same profiles; ids versioned when taken."""

from __future__ import annotations

import dataclasses

import pytest

import judges
from judges.candidates import STANCES, candidates, judge_file_text, rubric_rule
from judges.profiles import parse_judge_text
from judges.vision.templates import LENIENT_RULE, STRICT_RULE
from regua.errors import InputError
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@2")


def test_four_wordings_that_differ_only_in_the_prompt() -> None:
    base = judges.get_profile("vision-llm-openai@1")
    found = candidates(base, TASK, "R2", 4, prefix="t-r2")
    assert [c.stance for c in found] == list(STANCES)
    assert [c.doc.id for c in found] == [f"t-r2-{s}@1" for s in STANCES]
    prompts = {c.stance: c.profile.prompt_template or "" for c in found}
    assert STRICT_RULE in prompts["strict"] and LENIENT_RULE in prompts["lenient"]
    assert prompts["balanced"] == base.prompt_template
    r2 = next(c for c in TASK.criteria if c.id == "R2")
    assert r2.question.strip() in prompts["rubric"]
    assert len({c.profile.content_hash() for c in found}) == 4
    for c in found:  # everything but the prompt is the base profile's
        assert (c.profile.kind, c.profile.model, dict(c.profile.params)) == (
            base.kind,
            base.model,
            dict(base.params),
        )
    balanced = found[1].profile
    assert balanced.content_hash() == base.content_hash()  # the base wording, another id


def test_the_judge_file_parses_back_to_the_same_profiles() -> None:
    found = candidates(judges.get_profile("vision-llm-anthropic@1"), TASK, "B2", 4, prefix="f")
    parsed = parse_judge_text(judge_file_text(found, "# header\n"), "candidates.yaml")
    assert [p.id for p in parsed.profiles] == [c.doc.id for c in found]
    assert [p.content_hash() for p in parsed.profiles] == [c.profile.content_hash() for c in found]


def test_a_taken_id_with_other_content_gets_the_next_version() -> None:
    base = judges.get_profile("vision-llm-openai@1")
    (strict,) = candidates(base, TASK, "R2", 1, prefix="v")
    same = candidates(base, TASK, "R2", 1, prefix="v", taken=[strict.profile])
    assert same[0].doc.id == "v-strict@1"  # the same content keeps its id
    other = dataclasses.replace(strict.profile, params={"changed": True}, expected_hash=None)
    bumped = candidates(base, TASK, "R2", 1, prefix="v", taken=[other])
    assert bumped[0].doc.id == "v-strict@2"


def test_what_cannot_be_proposed_is_refused() -> None:
    base = judges.get_profile("vision-llm-openai@1")
    with pytest.raises(InputError, match="has no criterion 'Z9'"):
        candidates(base, TASK, "Z9", 2, prefix="x")
    with pytest.raises(InputError, match="--n must be 1 to 4"):
        candidates(base, TASK, "R2", 5, prefix="x")
    with pytest.raises(InputError, match="geometry@2 is a geometry judge"):
        candidates(judges.get_profile("geometry@2"), TASK, "R2", 2, prefix="x")


def test_the_rubric_wording_quotes_the_tasks_own_text_for_the_criterion() -> None:
    r1 = next(c for c in TASK.criteria if c.id == "R1")
    stated = r1.model_copy(
        update={"states": ("both feet on the pedals",), "not_applicable_when": "no pedals drawn"}
    )
    rule = rubric_rule(stated)
    assert r1.question.strip() in rule and '"both feet on the pedals"' in rule
    assert "It does not apply when: no pedals drawn." in rule
    assert "prompt states it" not in rubric_rule(r1)  # nothing invented when the task is silent
    task = TASK.model_copy(
        update={"criteria": tuple(stated if c.id == "R1" else c for c in TASK.criteria)}
    )
    plain, quoted = (
        candidates(judges.get_profile("vision-llm-openai@1"), t, "R1", 4, prefix="q")[3]
        for t in (TASK, task)
    )
    assert plain.doc.prompt_version != quoted.doc.prompt_version  # other text, other version
