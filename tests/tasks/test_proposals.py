"""Generated cases (pure part): reading a proposal template, allocating slots by declared weights,
the prompt, the reply and the task version each variant makes (or the problem it has)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from regua.errors import InputError, InvalidTaskError
from tasks.proposals import (
    allocate,
    build_variant,
    parse_reply,
    plan_slots,
    proposal_prompt,
    read_proposal_template,
)

SAMPLE = Path(__file__).resolve().parents[2] / "samples/tasks/pelican-personas.yaml"
DIMS = ["persona", "style", "language"]


def _template() -> str:
    return SAMPLE.read_text(encoding="utf-8")


def test_allocation_follows_the_declared_shares_by_largest_remainder() -> None:
    assert allocate(20, {"en": 0.6, "pt": 0.3, "es": 0.1}) == {"en": 12, "pt": 6, "es": 2}
    assert allocate(7, {"a": 1, "b": 1, "c": 1}) == {"a": 3, "b": 2, "c": 2}  # ties in order
    assert allocate(3, {"x": 0.5, "y": 0.0, "z": 0.5}) == {"x": 2, "y": 0, "z": 1}
    for n in (1, 5, 13, 200):
        assert sum(allocate(n, {"en": 0.61, "pt": 0.27, "es": 0.12}).values()) == n


def test_weighted_dimensions_are_allocated_never_proposed() -> None:
    template = read_proposal_template(_template(), "pelican-personas.yaml")
    plan = plan_slots(template, DIMS, 20)
    assert plan.proposed == ("persona", "style")  # language has weights: allocated
    assert Counter(s["language"] for s in plan.slots) == {"en": 12, "pt": 6, "es": 2}
    assert plan_slots(template, DIMS, 20) == plan  # the same template, the same slots
    prompt = proposal_prompt(template, plan)
    assert "Propose exactly 20 variants" in prompt and "persona, style" in prompt
    assert "20. language=" in prompt and "Examples of persona: retired-sailor" in prompt


def test_unusable_requests_are_refused_before_any_call() -> None:
    template = read_proposal_template(_template(), "t.yaml")
    with pytest.raises(InputError, match="'mood' is no placeholder"):
        plan_slots(template, ["mood"], 5)
    with pytest.raises(InputError, match="'style' has no declared values"):
        plan_slots(template, ["persona"], 5)
    with pytest.raises(InputError, match="--n must be 1 to 200"):
        plan_slots(template, DIMS, 0)
    bad_weight = _template().replace("{en: 0.6, pt: 0.3, es: 0.1}", "{en: 0.6, fr: 0.4}")
    with pytest.raises(InvalidTaskError, match=r"weights\.language: 'fr' is not one of"):
        read_proposal_template(bad_weight, "t.yaml")
    unused = _template().replace("  style: []", "  style: []\n  mood: [calm]")
    with pytest.raises(InvalidTaskError, match=r"dimensions\.mood: no placeholder uses it"):
        read_proposal_template(unused, "t.yaml")


def test_each_variant_makes_a_task_version_or_carries_its_problem() -> None:
    template = read_proposal_template(_template(), "t.yaml")
    plan = plan_slots(template, DIMS, 3)
    reply = json.dumps(
        {
            "variants": [
                {"persona": "night-nurse", "style": "woodcut", "rationale": "night shifts"},
                {"persona": "Night Nurse!", "style": "woodcut"},
                "not an object",
            ]
        }
    )
    parsed = parse_reply(f"```json\n{reply}\n```", plan)
    variants = [build_variant(template, plan.slots[i], v, r) for i, (v, r) in enumerate(parsed)]
    good, unslugged, empty = variants
    assert good.problem is None and good.spec is not None
    lang = plan.slots[0]["language"]
    assert good.spec.ref == f"pelican-night-nurse-woodcut-{lang}@1"
    assert good.spec.dimensions == {"persona": "night-nurse", "style": "woodcut", "language": lang}
    assert good.spec.template == "pelican-personas" and good.rationale == "night shifts"
    assert "night-nurse" in good.spec.prompt and "{" not in good.spec.prompt
    assert unslugged.spec is None and "not a short slug: persona='Night Nurse!'" in (
        unslugged.problem or ""
    )
    assert empty.spec is None and "no value for persona, style" in (empty.problem or "")


def test_a_reply_without_a_variants_list_is_refused() -> None:
    template = read_proposal_template(_template(), "t.yaml")
    plan = plan_slots(template, DIMS, 2)
    with pytest.raises(InputError, match="not JSON"):
        parse_reply("Sure! Here are some ideas: ...", plan)
    with pytest.raises(InputError, match='no "variants" list'):
        parse_reply('{"ideas": []}', plan)
    many = json.dumps({"variants": [{"persona": f"p{i}", "style": "s"} for i in range(5)]})
    assert len(parse_reply(many, plan)) == 2  # never more than the slots asked for
