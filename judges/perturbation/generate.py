"""Single-factor perturbations of structured drawings, with their manifest lines.

A perturbation edits the parsed SVG tree (lxml, hardened parser) in place and returns its
:class:`Effect`: the criteria it must change (with the expected status), the criteria whose
verdict is not predictable from the edit (``may_change``); every other applicable necessary
criterion of the task must not change. Each variant records the procedure id and version and the
perturbation id and version; the same base, parameters and seed always give the same bytes.

The provenance lives in the manifest and the :class:`Variant` record, not inside the SVG: adding
markup would itself be a second factor that a judge reading the file could notice.

The perturbation types and their registry live in :mod:`judges.perturbation.registry`
(re-exported here); importing this module loads the built-in perturbations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Importing the built-in modules registers every built-in perturbation.
import judges.perturbation.change
import judges.perturbation.declared
import judges.perturbation.keep  # noqa: F401
from judges.perturbation.declared import DECLARED_PERTURBATIONS
from judges.perturbation.registry import PERTURBATIONS, Family, registered_perturbations
from judges.perturbation.registry import Effect as Effect
from judges.perturbation.registry import (
    PerturbationNotApplicableError as PerturbationNotApplicableError,
)
from judges.perturbation.registry import PerturbationSpec as PerturbationSpec
from judges.perturbation.registry import register_perturbation as register_perturbation
from judges.perturbation.svgtree import parse_svg, serialize
from regua.errors import CalibrationError, InputError
from regua.hashing import sha256_hex as sha256_hex
from tasks import CriterionKind, TaskSpec

PROCEDURE_ID = "regua.calibration.perturb"
PROCEDURE_VERSION = "1"
MANIFEST_SCHEMA = "regua.perturbation-manifest/1"


def get_perturbation(perturbation_id: str) -> PerturbationSpec:
    """The registered perturbation with this id (:class:`UnknownPerturbationError` otherwise)."""
    return PERTURBATIONS.get(perturbation_id)


def list_perturbations(*, declared: bool = False) -> tuple[PerturbationSpec, ...]:
    """Every registered perturbation of the standard battery, sorted by id.

    ``declared=True`` adds the ones whose parameters come from a task's declared geometry
    (:mod:`judges.perturbation.declared`).
    """
    known = registered_perturbations()
    return tuple(known[k] for k in sorted(known) if declared or k not in DECLARED_PERTURBATIONS)


def canonical(value: Any) -> str:
    """Canonical JSON text (sorted keys, compact) used for ids and hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Variant:
    """One generated variant and everything its manifest line says about it."""

    variant_id: str
    base_name: str
    base_sha256: str
    perturbation_id: str
    perturbation_version: int
    family: Family
    params: Mapping[str, Any]
    measured: Mapping[str, Any]
    seed: int
    task_ref: str
    must_change: tuple[str, ...]
    must_not_change: tuple[str, ...]
    may_change: tuple[str, ...]
    expected: Mapping[str, str]
    output_sha256: str
    svg: bytes = field(repr=False)
    procedure_id: str = PROCEDURE_ID
    procedure_version: str = PROCEDURE_VERSION

    @property
    def procedure_ref(self) -> str:
        """``PERTURBATION@VERSION`` of the edit that made this variant."""
        return f"{self.perturbation_id}@{self.perturbation_version}"

    @property
    def file_name(self) -> str:
        """The file name the CLI writes the variant under."""
        return f"{self.variant_id}.svg"

    def to_manifest(self) -> dict[str, Any]:
        """The JSONL manifest line (JSON-able dict, without the SVG bytes)."""
        return {
            "schema": MANIFEST_SCHEMA,
            "variant_id": self.variant_id,
            "file": self.file_name,
            "task": self.task_ref,
            "base": {"name": self.base_name, "sha256": self.base_sha256},
            "procedure": {"id": self.procedure_id, "version": self.procedure_version},
            "perturbation": {
                "id": self.perturbation_id,
                "version": self.perturbation_version,
                "family": self.family,
                "params": dict(self.params),
            },
            "measured": dict(self.measured),
            "seed": self.seed,
            "must_change": list(self.must_change),
            "must_not_change": list(self.must_not_change),
            "may_change": list(self.may_change),
            "expected": dict(self.expected),
            "output_sha256": self.output_sha256,
        }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, Mapping):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def judged_criteria(task: TaskSpec) -> tuple[str, ...]:
    """The task's applicable necessary criteria (the ones a perturbation can be checked on)."""
    return tuple(c.id for c in task.criteria if c.applicable and c.kind is CriterionKind.NECESSARY)


def perturb(
    base_svg: str | bytes,
    perturbation_id: str,
    *,
    task: TaskSpec,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    base_name: str = "base",
) -> Variant:
    """Apply one perturbation to a base drawing; deterministic for (base, id, params, seed)."""
    spec = get_perturbation(perturbation_id)
    unknown = set(params or {}) - set(spec.defaults)
    if unknown:
        raise CalibrationError(f"{perturbation_id}: unknown parameters {sorted(unknown)}")
    resolved = {**spec.defaults, **(params or {})}
    base_bytes = base_svg.encode("utf-8") if isinstance(base_svg, str) else base_svg
    base_sha = sha256_hex(base_bytes)
    tree = parse_svg(base_bytes)
    rng = random.Random(f"{seed}|{spec.id}@{spec.version}|{base_sha}|{canonical(resolved)}")
    try:
        effect = spec.apply(tree, resolved, rng)
    except InputError as exc:
        raise PerturbationNotApplicableError(f"{perturbation_id} on {base_name}: {exc}") from exc
    out = serialize(tree)
    criteria = judged_criteria(task)
    must = tuple(c for c in criteria if c in effect.must_change)
    may = tuple(c for c in criteria if c in effect.may_change and c not in must)
    keep = tuple(c for c in criteria if c not in must and c not in may)
    tag = sha256_hex(canonical({"p": resolved, "seed": seed}).encode())[:8]
    return Variant(
        variant_id=f"{base_name}--{spec.id}--{tag}",
        base_name=base_name,
        base_sha256=base_sha,
        perturbation_id=spec.id,
        perturbation_version=spec.version,
        family=spec.family,
        params=_rounded(resolved),
        measured=_rounded(dict(effect.measured)),
        seed=seed,
        task_ref=task.ref,
        must_change=must,
        must_not_change=keep,
        may_change=may,
        expected={c: s for c, s in effect.expected.items() if c in must or c in may},
        output_sha256=sha256_hex(out),
        svg=out,
    )


@dataclass(frozen=True)
class Recipe:
    """One requested perturbation (id + parameters) in a batch."""

    perturbation_id: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"perturbation": self.perturbation_id, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recipe:
        """Inverse of :meth:`to_dict`."""
        return cls(str(data["perturbation"]), dict(data.get("params") or {}))


def default_recipes() -> tuple[Recipe, ...]:
    """The standard battery: every perturbation, foot moves at 0/2/5/10/20 % of a wheel."""
    out: list[Recipe] = []
    for spec in list_perturbations():
        if spec.id == "foot-off-pedal":
            out += [
                Recipe(spec.id, {"foot": side, "fraction": f})
                for side, f in (
                    ("left", 0.0),
                    ("left", 0.02),
                    ("right", 0.05),
                    ("left", 0.10),
                    ("right", 0.20),
                )
            ]
        elif spec.id == "hide-part":
            out += [
                Recipe(spec.id, {"method": m}) for m in ("clip-path", "display-none", "opacity-0")
            ]
        else:
            out.append(Recipe(spec.id))
    return tuple(out)


def perturb_many(
    bases: Sequence[tuple[str, str | bytes]],
    recipes: Iterable[Recipe],
    *,
    task: TaskSpec,
    seed: int = 0,
    skip_not_applicable: bool = True,
) -> tuple[list[Variant], list[dict[str, str]]]:
    """Apply every recipe to every ``(name, svg)`` base; returns variants and skip notes."""
    recipe_list = list(recipes)
    variants: list[Variant] = []
    skipped: list[dict[str, str]] = []
    for name, svg in bases:
        for recipe in recipe_list:
            try:
                variants.append(
                    perturb(
                        svg,
                        recipe.perturbation_id,
                        task=task,
                        params=recipe.params,
                        seed=seed,
                        base_name=name,
                    )
                )
            except PerturbationNotApplicableError as exc:
                if not skip_not_applicable:
                    raise
                skipped.append(
                    {"base": name, "perturbation": recipe.perturbation_id, "reason": str(exc)}
                )
    return variants, skipped


def manifest_jsonl(variants: Iterable[Variant]) -> str:
    """The manifest as JSONL text (one canonical line per variant)."""
    return "".join(canonical(v.to_manifest()) + "\n" for v in variants)
