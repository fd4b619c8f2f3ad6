"""Perturbations: determinism, manifests, geometry of the edits, invariance of the keep family."""

from __future__ import annotations

import json

import numpy as np
import numpy.typing as npt
import pytest

from judges.perturbation.generate import (
    PerturbationNotApplicableError,
    default_recipes,
    list_perturbations,
    manifest_jsonl,
    perturb,
    perturb_many,
    sha256_hex,
)
from judges.perturbation.svg_geometry import reference_diameter, require_bbox
from judges.perturbation.svgtree import find_id, iter_elements, local_name, parse_svg, require_id
from regua.errors import CalibrationError
from tasks import TaskSpec
from tests.judges.conftest import Raster

IDS = [
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
]
MUST_CHANGE = {
    "foot-off-pedal",
    "remove-wheel",
    "detach-frame",
    "lift-body",
    "pull-wing",
    "add-extra-leg",
    "occlude-contact",
    "hide-part",
}
MUST_NOT_CHANGE = {
    "background-colour",
    "add-scenery",
    "stroke-colours",
    "mirror",
    "circles-as-paths",
    "use-reuse",
    "nested-transforms",
    "reorder-keep-paint",
}


def test_registry_has_every_required_perturbation() -> None:
    specs = {s.id: s for s in list_perturbations()}
    assert set(specs) == MUST_CHANGE | MUST_NOT_CHANGE
    assert {s.id for s in specs.values() if s.family == "must_change"} == MUST_CHANGE


def test_same_seed_same_bytes_and_manifest(good_svg: bytes, task: TaskSpec) -> None:
    for recipe in default_recipes():
        a = perturb(good_svg, recipe.perturbation_id, task=task, params=recipe.params, seed=5)
        b = perturb(good_svg, recipe.perturbation_id, task=task, params=recipe.params, seed=5)
        assert a.svg == b.svg and a.output_sha256 == sha256_hex(a.svg)
        assert a.to_manifest() == b.to_manifest()
    one = perturb(good_svg, "nested-transforms", task=task, seed=1)
    two = perturb(good_svg, "nested-transforms", task=task, seed=2)
    assert one.svg != two.svg and one.variant_id != two.variant_id


def test_manifest_line_fields(good_svg: bytes, task: TaskSpec) -> None:
    v = perturb(good_svg, "foot-off-pedal", task=task, params={"fraction": 0.1}, base_name="g")
    line = json.loads(manifest_jsonl([v]))
    assert line["base"] == {"name": "g", "sha256": sha256_hex(good_svg)}
    assert line["procedure"] == {"id": "regua.calibration.perturb", "version": "1"}
    assert line["perturbation"]["id"] == "foot-off-pedal"
    assert line["perturbation"]["version"] == 1
    assert line["perturbation"]["params"] == {"foot": "left", "fraction": 0.1}
    assert line["must_change"] == ["R2"] and line["expected"] == {"R2": "fail"}
    assert set(line["must_not_change"]) == {"F1", "P1", "B1", "B2", "R1", "R3"}
    assert "A" not in line["must_not_change"]  # not applicable on the static task
    assert line["output_sha256"] == sha256_hex(v.svg)
    with pytest.raises(CalibrationError, match="unknown parameters"):
        perturb(good_svg, "mirror", task=task, params={"nope": 1})
    with pytest.raises(CalibrationError, match="unknown perturbation"):
        perturb(good_svg, "nope", task=task)


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.05, 0.10, 0.20])
@pytest.mark.parametrize("name", ["structured-good", "tall-blue", "mirrored-green", "paths-night"])
def test_foot_gap_is_the_requested_fraction_of_the_wheel(
    base_svgs: dict[str, bytes], task: TaskSpec, name: str, fraction: float
) -> None:
    v = perturb(base_svgs[name], "foot-off-pedal", task=task, params={"fraction": fraction})
    tree = parse_svg(v.svg)
    diameter = reference_diameter(tree)
    foot = require_bbox(require_id(tree, "foot-left"))
    pedal = require_bbox(require_id(tree, "pedal-left"))
    assert pedal.y0 - foot.y1 == pytest.approx(fraction * diameter, abs=0.01) or fraction == 0
    expected = {0.0: (), 0.02: (), 0.05: ("R2",), 0.10: ("R2",), 0.20: ("R2",)}[fraction]
    assert v.must_change == expected
    assert ("R2" in v.may_change) == (fraction == 0.02)


def _ids(svg: bytes) -> list[str]:
    return [i for i in (el.get("id") for el in iter_elements(parse_svg(svg))) if i]


@pytest.mark.parametrize("name", ["structured-good", "tall-blue", "mirrored-green", "paths-night"])
def test_every_variant_keeps_ids_unique_and_findable(
    base_svgs: dict[str, bytes], task: TaskSpec, name: str
) -> None:
    variants, skipped = perturb_many([(name, base_svgs[name])], default_recipes(), task=task)
    assert {s["perturbation"] for s in skipped} <= {"circles-as-paths"}
    for v in variants:
        ids = _ids(v.svg)
        assert len(ids) == len(set(ids)), v.variant_id
        missing = set(IDS) - set(ids)
        assert missing == ({"wheel-front"} if v.perturbation_id == "remove-wheel" else set())


def test_structural_edits(good_svg: bytes, task: TaskSpec) -> None:
    use = parse_svg(perturb(good_svg, "use-reuse", task=task).svg)
    assert local_name(require_id(use, "wheel-front")) == "use"
    parent = require_id(use, "wheel-front-shape").getparent()
    assert parent is not None and local_name(parent) == "defs"
    paths = parse_svg(perturb(good_svg, "circles-as-paths", task=task).svg)
    assert not [el for el in iter_elements(paths) if local_name(el) == "circle"]
    assert local_name(require_id(paths, "wheel-rear")) == "path"
    occl = parse_svg(perturb(good_svg, "occlude-contact", task=task).svg)
    last = [el for el in occl.getroot() if local_name(el)][-1]
    assert local_name(last) == "rect" and last.get("fill", "").startswith("#")
    leg = parse_svg(perturb(good_svg, "add-extra-leg", task=task).svg)
    feet = [el for el in iter_elements(leg) if el.get("d", "").startswith("M372 280")]
    assert len(feet) == 2
    gone = parse_svg(perturb(good_svg, "remove-wheel", task=task).svg)
    assert find_id(gone, "wheel-front") is None
    with pytest.raises(PerturbationNotApplicableError):
        perturb(
            b'<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>', "circles-as-paths", task=task
        )


def test_detach_frame_moves_the_frame_off_one_axle_only(good_svg: bytes, task: TaskSpec) -> None:
    v = perturb(good_svg, "detach-frame", task=task, params={"wheel": "front"})
    box = require_bbox(require_id(parse_svg(v.svg), "frame"))
    assert box.x0 == pytest.approx(250)  # still reaches the rear axle (x=250)
    assert box.x1 < 550 - 0.3 * 180  # stops well short of the front axle
    assert v.must_change == ("B2",)


def _differing(a: npt.NDArray[np.int16], b: npt.NDArray[np.int16]) -> int:
    return int((np.abs(a - b).max(axis=2) > 16).sum())


@pytest.mark.parametrize("name", ["structured-good", "tall-blue", "mirrored-green", "paths-night"])
def test_paint_preserving_variants_render_identically(
    base_svgs: dict[str, bytes], task: TaskSpec, raster: Raster, name: str
) -> None:
    base = raster(base_svgs[name])
    for pid, params in (
        ("circles-as-paths", {}),
        ("use-reuse", {}),
        ("nested-transforms", {}),
        ("nested-transforms", {"part": "foot-right"}),
        ("reorder-keep-paint", {}),
        ("foot-off-pedal", {"fraction": 0.0}),
    ):
        try:
            v = perturb(base_svgs[name], pid, task=task, params=params)
        except PerturbationNotApplicableError:
            continue
        assert _differing(raster(v.svg), base) <= 2, (name, pid)
    mirrored = raster(perturb(base_svgs[name], "mirror", task=task).svg)
    assert _differing(mirrored[:, ::-1], base) <= 20
    assert _differing(mirrored, base) > 1000


def test_hiding_methods_remove_the_foot_pixels(
    good_svg: bytes, task: TaskSpec, raster: Raster
) -> None:
    base = raster(good_svg)
    box = require_bbox(require_id(parse_svg(good_svg), "foot-left"))
    region = (slice(int(box.y0), int(box.y1)), slice(int(box.x0), int(box.x1)))
    changed = []
    for method in ("clip-path", "display-none", "opacity-0"):
        v = perturb(good_svg, "hide-part", task=task, params={"method": method})
        img = raster(v.svg)
        changed.append(_differing(img[region], base[region]))
        assert _differing(img, base) == changed[-1]  # nothing outside the foot changed
    assert min(changed) > 200 and len(set(changed)) == 1
