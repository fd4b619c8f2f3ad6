"""The bundled calibration set: integrity, label design, adjudication, split."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from judges.calibration.bundled import (
    ADJUDICATOR,
    DESIGN,
    REVIEW_B,
    Bundle,
    build_bundle,
    load_bundled_set,
)
from judges.calibration.setio import labels_from_jsonl
from judges.perturbation.generate import sha256_hex
from tasks import TaskSpec
from tests.conftest import REPO_ROOT

DATA = REPO_ROOT / "judges" / "calibration" / "data"


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundled_set(verify=True)


def test_size_and_artifacts(bundle: Bundle) -> None:
    s = bundle.calibration_set
    assert len(bundle.drawings) == 123  # 4 bases + 119 variants (no circle on paths-night)
    assert len(s.items) == 706
    assert {d.base for d in bundle.drawings} == {
        "structured-good",
        "tall-blue",
        "mirrored-green",
        "paths-night",
    }
    for item in s.items:
        assert sha256_hex(bundle.artifacts[item.artifact_sha256]) == item.artifact_sha256
    manifest = [json.loads(line) for line in (DATA / "manifest.jsonl").read_text().splitlines()]
    shas = {d.variant.output_sha256 for d in bundle.drawings if d.variant is not None}
    assert {m["output_sha256"] for m in manifest} == shas
    assert bundle.skipped and bundle.skipped[0]["perturbation"] == "circles-as-paths"


def test_the_sample_is_a_base(bundle: Bundle, good_svg: bytes) -> None:
    good = next(d for d in bundle.drawings if d.drawing_id == "structured-good")
    assert good.svg == good_svg


def test_labels_follow_the_design(bundle: Bundle) -> None:
    s = bundle.calibration_set
    for item in s.items:
        design = [lb for lb in s.labels_for(item.item_id) if lb.annotator == DESIGN]
        if item.relation in ("base", "must_not_change"):
            assert [lb.status for lb in design] == ["pass"], item.item_id
        elif item.relation == "must_change":
            assert [lb.status for lb in design] == ["fail"], item.item_id
    states = Counter(s.reference(i.item_id).state for i in s.items)
    assert states["disputed"] >= 1 and states["adjudicated"] >= 1
    for item in s.items:
        ref = s.reference(item.item_id)
        if ref.state == "disputed":  # borderline foot gaps: no gold label is invented
            assert item.perturbation == "foot-off-pedal@1" and ref.status is None
        if ref.state == "adjudicated":
            assert item.perturbation == "occlude-contact@1" and ref.status == "fail"
    annotators = {lb.annotator for lb in s.labels}
    assert annotators == {DESIGN, REVIEW_B, ADJUDICATOR}
    second = {lb.item_id for lb in s.labels if lb.annotator == REVIEW_B}
    assert 0.3 < len(second) / len(s.items) < 0.7


def test_stored_labels_are_what_the_design_produces(
    base_svgs: dict[str, bytes], task: TaskSpec
) -> None:
    recipe = json.loads((DATA / "recipe.json").read_text())
    fresh = build_bundle(recipe, base_svgs, task).calibration_set
    stored = labels_from_jsonl((DATA / "labels.jsonl").read_text())
    assert fresh.labels == stored


def test_split_keeps_each_base_on_one_side(bundle: Bundle) -> None:
    s = bundle.calibration_set
    assert s.split is not None and s.split.unit == "group"
    held = {i.group for i in s.part("held_out")}
    tune = {i.group for i in s.part("tuning")}
    assert len(held) == 2 and len(tune) == 2 and not held & tune
    for item in s.part("held_out"):
        assert item.base_item_id is None or item.base_item_id in set(s.split.held_out)


def test_readme_is_honest_about_the_labels() -> None:
    text = (DATA / "README.md").read_text()
    assert "not from independent people" in text
    assert "regua-perturbation-design" in text
