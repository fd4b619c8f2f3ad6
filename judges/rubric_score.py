"""A run's rubric score: each level, each bound, the score and whether it reached the threshold.

The score and the verdict are separate: :class:`RubricScore` records the levels the jury decided,
which bounds (``P >= 4``, ``H = 0``) held, the exact score with its arithmetic and whether it
reached the threshold; the outcome rule (:func:`judges.jury.decide_outcome`) then gives the
verdict, together with the task's necessary pass/fail criteria. A level not decided leaves the
score unknown (never estimated). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from regua.records import fields_of
from tasks import TaskSpec
from tasks.grading import format_number


@dataclass(frozen=True)
class BoundCheck:
    """One bound of the rubric on a run: ``I >= 4`` with the level found and whether it held."""

    criterion: str
    op: str
    bound: int
    text: str
    level: int | None
    held: bool | None
    """None when the level is not decided."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return fields_of(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BoundCheck:
        """Inverse of :meth:`to_dict`."""
        level, held = data.get("level"), data.get("held")
        return cls(
            str(data["criterion"]),
            str(data["op"]),
            int(data["bound"]),
            str(data["text"]),
            None if level is None else int(level),
            None if held is None else bool(held),
        )


@dataclass(frozen=True)
class RubricScore:
    """The rubric applied to one run's decided levels."""

    name: str
    formula: str
    threshold: float
    max_score: float
    levels: Mapping[str, int | None]
    bounds: tuple[BoundCheck, ...]
    score: float | None
    """The exact score rounded to 4 decimals for storage (``score_text`` is exact)."""
    score_text: str | None
    arithmetic: str | None
    threshold_met: bool | None
    missing: tuple[str, ...] = ()
    """Rubric criteria whose level is not decided (the score waits for them)."""

    def failed_bounds(self) -> tuple[BoundCheck, ...]:
        """The bounds whose level is decided and does not meet them."""
        return tuple(b for b in self.bounds if b.held is False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **fields_of(self),
            "levels": dict(self.levels),
            "bounds": [b.to_dict() for b in self.bounds],
            "missing": list(self.missing),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RubricScore:
        """Inverse of :meth:`to_dict`."""
        met, score = data.get("threshold_met"), data.get("score")
        return cls(
            name=str(data["name"]),
            formula=str(data["formula"]),
            threshold=float(data["threshold"]),
            max_score=float(data["max_score"]),
            levels={
                str(k): None if v is None else int(v) for k, v in (data.get("levels") or {}).items()
            },
            bounds=tuple(BoundCheck.from_dict(b) for b in data.get("bounds") or ()),
            score=None if score is None else float(score),
            score_text=data.get("score_text"),
            arithmetic=data.get("arithmetic"),
            threshold_met=None if met is None else bool(met),
            missing=tuple(str(m) for m in data.get("missing") or ()),
        )


def score_rubric(task: TaskSpec, levels: Mapping[str, int | None]) -> RubricScore | None:
    """The task's rubric on these decided levels (None when the task declares no rubric).

    ``levels`` maps criterion ids to the jury's decided level (None: not decided).
    """
    rubric = task.rubric
    if rubric is None:
        return None
    wanted = {cid: levels.get(cid) for cid in rubric.criteria()}
    missing = tuple(c for c, lv in wanted.items() if lv is None)
    bounds = []
    for b in rubric.bounds():
        level = wanted[b.criterion]
        held = None if level is None else b.holds(level)
        bounds.append(BoundCheck(b.criterion, b.op, b.level, b.text(), level, held))
    scales = {c.id: c.levels() for c in task.criteria if c.graded}
    known = {c: lv for c, lv in wanted.items() if lv is not None}
    term_ids = {t.criterion for t in rubric.terms()}
    exact: Fraction | None = rubric.score(known) if term_ids <= set(known) else None
    return RubricScore(
        name=rubric.name,
        formula=rubric.display(),
        threshold=rubric.threshold,
        max_score=float(rubric.max_score(scales)),
        levels=wanted,
        bounds=tuple(bounds),
        score=None if exact is None else round(float(exact), 4),
        score_text=None if exact is None else format_number(exact),
        arithmetic=None if exact is None else rubric.arithmetic(known),
        threshold_met=None if exact is None else exact >= Fraction(Decimal(str(rubric.threshold))),
        missing=missing,
    )
