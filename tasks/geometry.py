"""Geometry a task declares: its parts, the relations its criteria check, the reference length.

A structured task names the parts the drawing must carry (as ``id`` attributes), says which
criterion checks which relation between them, and which part's size normalises every distance.
The geometry judge and the perturbation generator read this declaration, so a new structured
task needs no code: only data.

Relation kinds (``Relation.kind``):

* ``present`` — every part in ``parts`` is drawn and visible; parts in ``round`` must fit a
  round ellipse, parts in ``small`` must stay small beside the reference length, and each pair in
  ``apart`` must be at least half a reference length apart (two wheels, not one).
* ``contact`` — each pair ``a``-``b`` touches, both visible (``quantifier: any`` — at least one
  pair); ``over_time: true`` checks it at every sampled time of an animation.
* ``seated`` — ``a`` rests on ``b``: touching, above it and not sunk through it.
* ``joined`` — ``a`` reaches ``b`` (``to: region``) or the centre of ``b``'s fitted ellipse
  (``to: centre``), measured on the parts drawn alone (covered joins still count).
* ``rotates`` — ``parts[0]`` turns ``turns_per_loop`` revolutions per animation loop; the angle is
  read from the direction of the first pair (``a`` to ``b``) when drawn, else from the part's axis.

A task without a ``geometry`` block may take its family's declaration (data under
``tasks/families/``, see :func:`tasks.declared.declared_geometry`), which applies when the task
requires every required part id: that is how the frozen pelican versions are re-expressed
without changing their content hash.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

PART_ID = r"^[A-Za-z][A-Za-z0-9_.-]*$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RelationKind(StrEnum):
    """What a relation checks on the part masks."""

    PRESENT = "present"
    CONTACT = "contact"
    SEATED = "seated"
    JOINED = "joined"
    ROTATES = "rotates"


class GeometryPart(_Frozen):
    """One named part of the drawing."""

    id: str = Field(pattern=PART_ID)
    required: bool = True
    role: str | None = None
    """Free description of what the part is (``wheel``, ``foot``...), for people and reports."""


class PartPair(_Frozen):
    """Two parts a relation measures between; ``label`` names the pair in verdict details."""

    a: str = Field(pattern=PART_ID)
    b: str = Field(pattern=PART_ID)
    label: str | None = None
    to: Literal["region", "centre"] = "region"

    @property
    def name(self) -> str:
        """The label, or ``a-b``."""
        return self.label or f"{self.a}-{self.b}"


class Relation(_Frozen):
    """The relation one criterion checks."""

    criterion: str = Field(pattern=r"^[A-Z][A-Z0-9]*$")
    kind: RelationKind
    pairs: tuple[PartPair, ...] = ()
    parts: tuple[str, ...] = ()
    round: tuple[str, ...] = ()
    small: tuple[str, ...] = ()
    apart: tuple[PartPair, ...] = ()
    quantifier: Literal["all", "any"] = "all"
    over_time: bool = False
    turns_per_loop: float = Field(default=1.0, gt=0)
    summary: str | None = None
    """What a pass says (e.g. ``both feet touch their own pedals``); a generic text otherwise."""

    @model_validator(mode="after")
    def _shape(self) -> Relation:
        needs_pairs = (RelationKind.CONTACT, RelationKind.SEATED, RelationKind.JOINED)
        if self.kind in needs_pairs and not self.pairs:
            raise ValueError(f"{self.criterion}: a {self.kind.value} relation needs pairs")
        if self.kind in (RelationKind.PRESENT, RelationKind.ROTATES) and not self.parts:
            raise ValueError(f"{self.criterion}: a {self.kind.value} relation needs parts")
        return self

    def part_ids(self) -> tuple[str, ...]:
        """Every part id the relation mentions, in order, without repeats."""
        ids = [*self.parts, *self.round, *self.small]
        for p in (*self.pairs, *self.apart):
            ids += [p.a, p.b]
        return tuple(dict.fromkeys(ids))


class ReferenceLength(_Frozen):
    """The length every distance is divided by: the mean ``measure`` of ``parts``."""

    parts: tuple[str, ...] = Field(min_length=1)
    measure: Literal["diameter", "height", "width"] = "diameter"
    name: str = "reference length"
    """How verdicts call it (``wheel diameter``); ``<name>_px`` is its key in verdict details."""


class GeometrySpec(_Frozen):
    """Parts, relations and reference length of a structured task."""

    parts: tuple[GeometryPart, ...] = Field(min_length=1)
    relations: tuple[Relation, ...] = Field(min_length=1)
    reference_length: ReferenceLength

    @model_validator(mode="after")
    def _known_parts(self) -> GeometrySpec:
        known = [p.id for p in self.parts]
        if len(known) != len(set(known)):
            raise ValueError(f"duplicate part ids in the geometry: {known}")
        criteria = [r.criterion for r in self.relations]
        if len(criteria) != len(set(criteria)):
            raise ValueError(f"one relation per criterion, got {criteria}")
        for rel in self.relations:
            unknown = [p for p in rel.part_ids() if p not in known]
            if unknown:
                raise ValueError(f"relation {rel.criterion} names undeclared parts {unknown}")
        unknown = [p for p in self.reference_length.parts if p not in known]
        if unknown:
            raise ValueError(f"the reference length names undeclared parts {unknown}")
        return self

    def required_ids(self) -> tuple[str, ...]:
        """Ids of the required parts."""
        return tuple(p.id for p in self.parts if p.required)

    def relation(self, criterion_id: str) -> Relation | None:
        """The relation a criterion checks (None when geometry does not check it)."""
        return next((r for r in self.relations if r.criterion == criterion_id), None)
