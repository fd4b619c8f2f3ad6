"""The perturbation generator: single-factor edits of structured drawings, made as data.

It turns a base drawing and a recipe (perturbation id, parameters, seed) into variants whose
designed effect on each criterion is known (must change, may change, must not change), with one
manifest line per variant. Calibration (:mod:`judges.calibration`) measures judges on such sets;
this package only makes them. Built-in perturbations (:mod:`.change`, :mod:`.keep`,
:mod:`.declared`) register through :func:`register_perturbation` exactly like a plugin would;
:mod:`.declared_recipes` derives one recipe per geometric criterion from a task's declared
geometry. Pure: SVG text in (hardened lxml parser, :mod:`.svgtree`), SVG text and numbers out.

Import surface::

    from judges.perturbation import perturb, perturb_many, Recipe, Variant, ...
"""

from judges.perturbation.generate import (
    Recipe,
    Variant,
    default_recipes,
    get_perturbation,
    list_perturbations,
    manifest_jsonl,
    perturb,
    perturb_many,
)
from judges.perturbation.registry import (
    Effect,
    PerturbationNotApplicableError,
    PerturbationSpec,
    register_perturbation,
)

__all__ = [
    "Effect",
    "PerturbationNotApplicableError",
    "PerturbationSpec",
    "Recipe",
    "Variant",
    "default_recipes",
    "get_perturbation",
    "list_perturbations",
    "manifest_jsonl",
    "perturb",
    "perturb_many",
    "register_perturbation",
]
