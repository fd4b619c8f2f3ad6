"""Issue 16: perturbation sets from the declared geometry, and the perturbation-sets check."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judges.perturbation.declared_recipes import PerturbationSets, declared_recipes
from judges.perturbation.generate import (
    PerturbationNotApplicableError,
    default_recipes,
    list_perturbations,
    perturb,
)
from tasks import bundled_registry
from tasks.acceptance import AcceptanceSubject
from tasks.registry import bundled_spec_texts

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = (ROOT / "samples" / "outputs" / "structured-good.svg").read_text()
FLAMINGO = ROOT / "tests" / "fixtures" / "tasks" / "flamingo-unicycle-structured-1.yaml"


def test_pelican_family_declaration_gives_a_set_per_geometric_criterion() -> None:
    task = bundled_registry().get("pelican-bicycle-structured@2")
    recipes = declared_recipes(task)
    assert set(recipes) == {"B1", "B2", "R1", "R2", "R3"}
    # any-quantified R3 (one wing is enough) moves every wing off the handlebar
    assert recipes["R3"].params["moves"] == [
        ["wing-left", "handlebar", "box"],
        ["wing-right", "handlebar", "box"],
    ]
    assert recipes["B1"].params["part"] == "frame"  # never a part that sets the scale
    for cid, recipe in recipes.items():
        variant = perturb(SAMPLE, recipe.perturbation_id, task=task, params=recipe.params)
        assert variant.must_change[0] == cid and variant.expected[cid] == "fail"
        assert cid in variant.to_manifest()["perturbation"]["params"]["must"]  # provenance


def test_declared_perturbations_stay_out_of_the_standard_battery() -> None:
    declared = {"separate-parts", "hide-declared-part", "freeze-part"}
    assert declared <= {s.id for s in list_perturbations(declared=True)}
    assert not declared & {s.id for s in list_perturbations()}
    assert not declared & {r.perturbation_id for r in default_recipes()}


def test_perturbation_sets_check_passes_flamingo_and_fails_a_missing_part() -> None:
    text = FLAMINGO.read_text()
    check = PerturbationSets()
    ok = check.run(AcceptanceSubject.from_text(text, "f.yaml"))
    assert ok.status == "pass" and "R2 (separate-parts)" in ok.reason
    # a reference drawing without a seat: the R1 set cannot be made from it
    drawing = (FLAMINGO.parent / "flamingo-unicycle-reference.svg").read_text()
    no_seat = drawing.replace('id="seat"', 'id="saddle"')
    bad = check.run(AcceptanceSubject.from_text(text, "f.yaml", no_seat))
    assert bad.status == "fail"
    assert bad.reason.startswith("R1: separate-parts does not apply to the reference drawing")
    assert "seat" in bad.reason


def test_perturbation_sets_check_without_geometry_or_spec() -> None:
    check = PerturbationSets()
    static = dict(bundled_spec_texts())["pelican-bicycle-static-1.yaml"]
    got = check.run(AcceptanceSubject.from_text(static, "s.yaml"))
    assert (got.status, got.reason) == ("pass", "no necessary criterion has declared geometry")
    doc = yaml.safe_load(FLAMINGO.read_text())
    doc["version"] = 0
    skipped = check.run(AcceptanceSubject.from_text(yaml.safe_dump(doc), "f.yaml"))
    assert skipped.status == "skip"


def test_rotation_set_freezes_the_part_and_its_direction_pair() -> None:
    task = bundled_registry().get("pelican-bicycle-animated@2")
    recipe = declared_recipes(task)["A1"]
    assert recipe.params["parts"] == ["crank", "pedal-left", "pedal-right"]
    animated = (ROOT / "samples" / "outputs" / "animated-pedalling.svg").read_text()
    variant = perturb(animated, recipe.perturbation_id, task=task, params=recipe.params)
    assert variant.must_change == ("A1",) and "A2" in variant.may_change
    assert variant.measured["removed_animations"] > 0
    assert variant.svg.count(b"<animate") < animated.count("<animate")
    with pytest.raises(PerturbationNotApplicableError, match="no animation to remove"):
        perturb(SAMPLE, recipe.perturbation_id, task=task, params=recipe.params)
