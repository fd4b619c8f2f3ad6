"""Perturbation sets a task's declared geometry implies: one recipe per geometric criterion.

:func:`declared_recipes` reads :func:`tasks.declared.declared_geometry` and fills in the
parameters of the declared perturbations (:mod:`judges.perturbation.declared`): which
part moves off which, the reference length, and the criteria the edit must or may change.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.perturbation.generate import Recipe, judged_criteria, perturb
from regua.errors import ReguaError
from tasks import TaskSpec
from tasks.acceptance import (
    AcceptanceSubject,
    CheckOutcome,
    needs_spec,
    register_acceptance_check,
)
from tasks.declared import declared_geometry
from tasks.geometry import GeometrySpec, Relation, RelationKind


def _mentions(geo: GeometrySpec, parts: Sequence[str], skip: set[str]) -> list[str]:
    """Criteria of the other relations that mention one of ``parts``."""
    return [
        r.criterion
        for r in geo.relations
        if r.criterion not in skip and any(p in r.part_ids() for p in parts)
    ]


def _recipe(geo: GeometrySpec, rel: Relation) -> Recipe:
    ref = geo.reference_length
    if rel.kind is RelationKind.PRESENT:
        # hiding a part that sets the scale would leave every other relation unmeasurable
        part = next((p for p in rel.parts if p not in ref.parts), rel.parts[0])
        return Recipe(
            "hide-declared-part",
            {"part": part, "must": [rel.criterion], "may": _mentions(geo, [part], {rel.criterion})},
        )
    if rel.kind is RelationKind.ROTATES:
        frozen = list(
            dict.fromkeys([rel.parts[0], *(p for q in rel.pairs[:1] for p in (q.a, q.b))])
        )
        may = _mentions(geo, frozen, {rel.criterion})
        return Recipe("freeze-part", {"parts": frozen, "must": [rel.criterion], "may": may})
    moves = [[p.a, p.b, "centre" if p.to == "centre" else "box"] for p in rel.pairs]
    if rel.quantifier == "all":
        moves = moves[:1]  # one broken pair fails the relation: a single factor
    pairs = {(m[0], m[1]) for m in moves}
    must = [
        r.criterion
        for r in geo.relations
        if r.kind is rel.kind and pairs <= {(p.a, p.b) for p in r.pairs} and r.quantifier == "all"
    ]
    must = list(dict.fromkeys([rel.criterion, *must]))
    moved = [m[1] if m[2] == "centre" else m[0] for m in moves]
    params = {
        "moves": moves,
        "reference": list(ref.parts),
        "measure": ref.measure,
        "must": must,
        "may": _mentions(geo, moved, set(must)),
    }
    return Recipe("separate-parts", params)


def declared_recipes(task: TaskSpec) -> dict[str, Recipe]:
    """One must-change recipe per judged criterion the task's geometry declares a relation for."""
    geo = declared_geometry(task)
    if geo is None:
        return {}
    judged = set(judged_criteria(task))
    return {r.criterion: _recipe(geo, r) for r in geo.relations if r.criterion in judged}


def geometric_criteria(task: TaskSpec) -> tuple[str, ...]:
    """The task's judged (necessary, applicable) criteria that its geometry declares."""
    geo = declared_geometry(task)
    if geo is None:
        return ()
    return tuple(c for c in judged_criteria(task) if geo.relation(c) is not None)


def _try_recipe(task: TaskSpec, cid: str, recipe: Recipe, svg: str) -> str | None:
    """Why the recipe makes no variant of ``svg`` that must change ``cid`` (None when it does)."""
    try:
        variant = perturb(svg, recipe.perturbation_id, task=task, params=recipe.params)
    except ReguaError as exc:
        return f"{cid}: {recipe.perturbation_id} does not apply to the reference drawing: {exc}"
    if cid not in variant.must_change:
        return f"{cid}: the {recipe.perturbation_id} variant is not designed to change it"
    return None


class PerturbationSets:
    """``perturbation-sets``: a perturbation set exists for each necessary geometric criterion.

    From the declared geometry alone; with a reference drawing, each recipe must also apply to
    it and make a variant designed to change its criterion.
    """

    id = "perturbation-sets"

    def run(self, subject: AcceptanceSubject) -> CheckOutcome:
        """Fail naming each geometric criterion without a usable perturbation set."""
        task = subject.spec
        if task is None:
            return needs_spec(self.id, subject) or CheckOutcome(self.id, "skip", "no spec")
        wanted = geometric_criteria(task)
        if not wanted:
            return CheckOutcome(self.id, "pass", "no necessary criterion has declared geometry")
        recipes = declared_recipes(task)
        problems = [f"{c}: no perturbation recipe" for c in wanted if c not in recipes]
        if subject.reference_svg is not None:
            for cid in wanted:
                if cid in recipes:
                    why = _try_recipe(task, cid, recipes[cid], subject.reference_svg)
                    problems += [why] if why else []
        if problems:
            return CheckOutcome(self.id, "fail", "; ".join(problems))
        made = ", ".join(f"{c} ({recipes[c].perturbation_id})" for c in wanted)
        on = " applied to the reference drawing" if subject.reference_svg is not None else ""
        return CheckOutcome(self.id, "pass", f"one set per geometric criterion{on}: {made}")


register_acceptance_check(PerturbationSets())
