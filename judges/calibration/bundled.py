"""The bundled calibration set for ``pelican-bicycle-structured@1``.

Stored under ``judges/calibration/data/``: the base drawings (``bases/*.svg``, written for the
project), ``recipe.json`` (which perturbations, parameters, seed, labelled criteria, split rule),
``manifest.jsonl`` (one line per generated variant with its sha256), ``labels.jsonl`` and
``split.json``. Variants are regenerated deterministically at load and checked against the
manifest's sha256, so the set is byte-for-byte the one that was labelled.

The labels come from the perturbation design, not from independent people: annotator
``regua-perturbation-design`` labels each item by the edit's designed effect; for about half of
the items ``regua-design-review-b`` is a second, stricter reading of the same design (written by
the same engineer) that differs on borderline and occlusion cases; ``regua-design-adjudication``
settles the occlusion disagreement and leaves the borderline ones disputed. Human-to-human
numbers on this set therefore measure rubric ambiguity only as seen by the designer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from judges.calibration.setio import labels_from_jsonl, labels_to_jsonl
from judges.calibration.sets import (
    CalibrationItem,
    CalibrationSet,
    Label,
    as_relation,
    as_role,
    make_split,
)
from judges.perturbation.generate import Recipe, Variant, canonical, perturb_many, sha256_hex
from regua.errors import CalibrationError
from tasks import TaskSpec, bundled_registry

DESIGN = "regua-perturbation-design"
REVIEW_B = "regua-design-review-b"
ADJUDICATOR = "regua-design-adjudication"
_TIMES = {
    DESIGN: "2026-11-29T20:00:00Z",
    REVIEW_B: "2026-11-29T20:30:00Z",
    ADJUDICATOR: "2026-11-29T21:00:00Z",
}


@dataclass(frozen=True)
class Drawing:
    """One labelled drawing: a base or a generated variant."""

    drawing_id: str
    base: str
    svg: bytes
    file: str
    variant: Variant | None = None


@dataclass(frozen=True)
class Bundle:
    """The bundled set with its artifacts (sha256 → SVG bytes) and generation records."""

    calibration_set: CalibrationSet
    artifacts: Mapping[str, bytes]
    drawings: tuple[Drawing, ...]
    manifest: str
    skipped: tuple[Mapping[str, str], ...]


def _data_dir() -> Path:
    return Path(str(resources.files("judges.calibration") / "data"))


def _review_subset(item_id: str) -> bool:
    return int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) % 2 == 0


def _labels_for(drawing: Drawing, criterion: str, item_id: str) -> list[Label]:
    """Design labels (and the second reading / adjudication where it applies)."""
    v = drawing.variant

    def lb(who: str, status: str, why: str) -> Label:
        role = "adjudicator" if who == ADJUDICATOR else "annotator"
        return Label(item_id, who, status, _TIMES[who], why, as_role(role))

    if v is None:
        why = "base drawing written for the project to meet every criterion"
        extra = [lb(REVIEW_B, "pass", why)] if _review_subset(item_id) else []
        return [lb(DESIGN, "pass", why), *extra]
    pid = v.procedure_ref
    design: tuple[str, str] | None = None
    if criterion in v.must_change:
        want = v.expected[criterion]
        design = (want, f"{pid} {dict(v.params)} is designed to make {criterion} {want}")
    elif criterion in v.must_not_change:
        design = ("pass", f"{pid} must not change {criterion} (base: pass)")
    elif criterion in v.expected:
        design = (v.expected[criterion], f"{pid}: borderline by design")
    second = design
    if v.perturbation_id == "foot-off-pedal" and criterion in v.may_change:
        second = ("fail", "a visible gap between foot and pedal is no contact")
    elif v.perturbation_id == "occlude-contact" and criterion == "R2":
        second = ("uncertain", "the contact is covered; cannot tell whether the foot touches")
    elif v.perturbation_id == "hide-part" and criterion == "P1" and criterion in v.may_change:
        second = ("fail", "a hidden foot: the pelican is not shown whole")
    elif v.perturbation_id in ("lift-body", "pull-wing") and criterion == "P1":
        second = ("pass", "the pelican is still recognisable and whole")
    out: list[Label] = []
    if design is not None:
        out.append(lb(DESIGN, *design))
    if second is not None and _review_subset(item_id):
        out.append(lb(REVIEW_B, *second))
        if design is not None and second[0] != design[0] and v.perturbation_id == "occlude-contact":
            why = "R2 asks for both contacts visible; a hidden one fails"
            out.append(lb(ADJUDICATOR, "fail", why))
    return out


def _relation(variant: Variant | None, criterion: str) -> str:
    """How a drawing relates to its base on one criterion (``base`` for a base drawing)."""
    if variant is None:
        return "base"
    if criterion in variant.must_change:
        return "must_change"
    if criterion in variant.must_not_change:
        return "must_not_change"
    return "may_change"


def _make_item(
    drawing: Drawing,
    criterion: str,
    task: TaskSpec,
    kinds: Mapping[str, str],
    base_meta: Mapping[str, Any],
) -> CalibrationItem:
    """The calibration item asking ``criterion`` about ``drawing``."""
    v = drawing.variant
    return CalibrationItem(
        item_id=f"{drawing.drawing_id}:{criterion}",
        artifact_sha256=sha256_hex(drawing.svg),
        criterion=criterion,
        task_ref=task.ref,
        criterion_kind=kinds.get(criterion, "necessary"),
        artifact_file=drawing.file,
        style_tags=tuple(base_meta[drawing.base]["style_tags"]),
        group=drawing.base,
        base_item_id=None if v is None else f"{drawing.base}:{criterion}",
        relation=as_relation(_relation(v, criterion)),
        perturbation=None if v is None else v.procedure_ref,
    )


def build_bundle(
    recipe: Mapping[str, Any],
    bases: Mapping[str, bytes],
    task: TaskSpec,
    labels: Sequence[Label] | None = None,
) -> Bundle:
    """Generate variants and items from a recipe; design labels unless ``labels`` are given."""
    seed = int(recipe["seed"])
    base_meta = {b["name"]: b for b in recipe["bases"]}
    variants, skipped = perturb_many(
        [(name, bases[name]) for name in base_meta],
        [Recipe.from_dict(r) for r in recipe["recipes"]],
        task=task,
        seed=seed,
    )
    drawings = [Drawing(n, n, bases[n], str(base_meta[n]["file"])) for n in base_meta]
    drawings += [
        Drawing(v.variant_id, v.base_name, v.svg, f"variants/{v.file_name}", v) for v in variants
    ]
    kinds = {c.id: c.kind.value for c in task.criteria}
    items: list[CalibrationItem] = []
    made: list[Label] = []
    for d in drawings:
        for criterion in recipe["labelled_criteria"]:
            item_id = f"{d.drawing_id}:{criterion}"
            mine = _labels_for(d, criterion, item_id)
            if labels is None and not mine:
                continue
            items.append(_make_item(d, criterion, task, kinds, base_meta))
            made += mine
    final_labels = tuple(made) if labels is None else tuple(labels)
    labelled = {lb.item_id for lb in final_labels}
    items = [i for i in items if i.item_id in labelled]
    sp = recipe["split"]
    split = make_split(items, int(sp["seed"]), float(sp["held_out_fraction"]), sp["unit"])
    cal_set = CalibrationSet(
        set_id=str(recipe["set_id"]),
        task_ref=task.ref,
        items=tuple(items),
        labels=final_labels,
        split=split,
        description=str(recipe.get("description") or ""),
        label_provenance="project",  # written by the project's authors, not by people judging
    )
    return Bundle(
        calibration_set=cal_set,
        artifacts={sha256_hex(d.svg): d.svg for d in drawings},
        drawings=tuple(drawings),
        manifest="".join(canonical(v.to_manifest()) + "\n" for v in variants),
        skipped=tuple(skipped),
    )


def _read_sources(data: Path) -> tuple[dict[str, Any], dict[str, bytes], TaskSpec]:
    recipe = json.loads((data / "recipe.json").read_text(encoding="utf-8"))
    bases = {b["name"]: (data / b["file"]).read_bytes() for b in recipe["bases"]}
    return recipe, bases, bundled_registry().get(recipe["task"])


def load_bundled_set(verify: bool = True) -> Bundle:
    """Regenerate the bundled set; with ``verify`` check every sha256, the labels and the split."""
    data = _data_dir()
    recipe, bases, task = _read_sources(data)
    labels = labels_from_jsonl((data / "labels.jsonl").read_text(encoding="utf-8"))
    bundle = build_bundle(recipe, bases, task, labels=labels)
    if verify:
        stored = (data / "manifest.jsonl").read_text(encoding="utf-8")
        if stored != bundle.manifest:
            raise CalibrationError("bundled variants differ from manifest.jsonl (sha256 changed)")
        split = json.loads((data / "split.json").read_text(encoding="utf-8"))
        built = bundle.calibration_set.split
        if built is None or split != built.to_dict():
            raise CalibrationError("bundled split differs from split.json")
    return bundle


def write_bundle(data: Path | None = None) -> Bundle:
    """(Re)write manifest.jsonl, labels.jsonl and split.json from the recipe and the bases."""
    target = data or _data_dir()
    recipe, bases, task = _read_sources(target)
    bundle = build_bundle(recipe, bases, task)
    cal_set = bundle.calibration_set
    (target / "manifest.jsonl").write_text(bundle.manifest, encoding="utf-8")
    (target / "labels.jsonl").write_text(labels_to_jsonl(cal_set.labels), encoding="utf-8")
    split = cal_set.split.to_dict() if cal_set.split is not None else None
    (target / "split.json").write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    return bundle
