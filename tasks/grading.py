"""Graded criteria and weighted rubrics: ordinal levels, a score formula, a threshold, bounds.

A criterion may be graded on an ordinal scale (``scale: 0..5``) with a written anchor for every
level; a task may declare a ``rubric`` over its graded criteria::

    rubric:
      name: Q
      formula: "20 x (0.30 P + 0.25 I + 0.20 C + 0.10 L + 0.15 (5 - H))"
      threshold: 80
      minimums: {P: 4, I: 4, C: 3}
      maximums: {H: 0}

The formula is a multiplier times a weighted sum of levels, where a term may invert a criterion
at the top of its scale (``5 - H``). The score is computed exactly (weights as decimals, never
binary floats), so ``Q >= 80`` is decided without rounding. The rubric decides together with the
task's necessary pass/fail criteria: the work passes only when every necessary criterion passes,
every bound holds and the score reaches the threshold. The scale is ordinal: the score is a
summary of levels, never a measurement finer than a level. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCALE_PATTERN = r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$"
MAX_LEVELS = 11
"""At most eleven levels (0..10): a longer ordinal scale is no longer read as levels."""


def parse_scale(text: str) -> tuple[int, int]:
    """``"0..5"`` → ``(0, 5)``; ValueError for anything else, or a scale that is not increasing."""
    match = re.match(SCALE_PATTERN, text)
    if match is None:
        raise ValueError(f"scale must look like 0..5, got {text!r}")
    low, high = int(match.group(1)), int(match.group(2))
    if high <= low:
        raise ValueError(f"scale {text!r}: the top level must be above the bottom one")
    if high - low + 1 > MAX_LEVELS:
        raise ValueError(f"scale {text!r}: at most {MAX_LEVELS} levels")
    return low, high


class Frozen(BaseModel):
    """Immutable and strict about unknown fields (like every spec model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class RubricTerm(Frozen):
    """One weighted term of the formula: ``weight x level`` or ``weight x (top - level)``."""

    criterion: str
    weight: str
    """The weight as written (a decimal text, e.g. ``0.30``): exact, never a binary float."""
    inverted_from: int | None = None
    """``5`` for ``5 - H``: the term counts ``5 - level`` (the top of the criterion's scale)."""

    def text(self) -> str:
        """The term as a formula reads it: ``0.30 P`` or ``0.15 (5 - H)``."""
        if self.inverted_from is None:
            return f"{self.weight} {self.criterion}"
        return f"{self.weight} ({self.inverted_from} - {self.criterion})"

    def value(self, level: int) -> int:
        """What the level contributes before weighting."""
        return level if self.inverted_from is None else self.inverted_from - level


BoundOp = Literal[">=", "<="]


class Bound(Frozen):
    """A per-criterion bound of the rubric: ``P >= 4`` (a minimum) or ``H <= 0`` (a maximum)."""

    criterion: str
    op: BoundOp
    level: int

    def holds(self, level: int) -> bool:
        """Whether a level meets the bound."""
        return level >= self.level if self.op == ">=" else level <= self.level

    def text(self) -> str:
        """``P >= 4``; a maximum at the bottom of the scale reads ``H = 0``."""
        if self.op == "<=" and self.level == 0:
            return f"{self.criterion} = 0"
        return f"{self.criterion} {self.op} {self.level}"


_NUMBER = r"\d+(?:\.\d+)?"
_TIMES = r"\s*(?:\*|x|\u00d7|\u00b7)?\s*"
_INVERTED = re.compile(rf"^({_NUMBER}){_TIMES}\(\s*(\d+)\s*[-\u2212]\s*([A-Z][A-Z0-9]*)\s*\)$")
_PLAIN = re.compile(rf"^({_NUMBER}){_TIMES}([A-Z][A-Z0-9]*)$")
_OUTER = re.compile(rf"^\s*(?:({_NUMBER}){_TIMES})?\(\s*(.*)\s*\)\s*$", re.DOTALL)


def _decimal_text(value: str) -> str:
    try:
        Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number") from None
    return value


def parse_formula(formula: str) -> tuple[str, tuple[RubricTerm, ...]]:
    """``"20 x (0.30 P + 0.15 (5 - H))"`` → ``("20", terms)``.

    The grammar: an optional multiplier and ``x`` (or ``*``, the multiplication sign or the
    middle dot) before a parenthesised sum, or a bare sum; each term is ``WEIGHT CRITERION``
    or ``WEIGHT (TOP - CRITERION)``.
    ValueError names the term it cannot read.
    """
    text = formula.strip()
    outer = _OUTER.match(text)
    if outer is None or not _balanced(outer.group(2)):
        return "1", _terms(text)
    try:
        return _decimal_text(outer.group(1) or "1"), _terms(outer.group(2))
    except ValueError as inner:
        try:  # "0.7 (5 - H)" alone is one term, not a multiplier of a sum
            return "1", _terms(text)
        except ValueError:
            raise inner from None


def _terms(text: str) -> tuple[RubricTerm, ...]:
    terms: list[RubricTerm] = []
    for raw in _split_sum(text):
        part = raw.strip()
        inverted = _INVERTED.match(part)
        plain = _PLAIN.match(part)
        if inverted is not None:
            weight, top, cid = inverted.groups()
            terms.append(RubricTerm(criterion=cid, weight=weight, inverted_from=int(top)))
        elif plain is not None:
            weight, cid = plain.groups()
            terms.append(RubricTerm(criterion=cid, weight=weight))
        else:
            raise ValueError(
                f"formula term {part!r} is neither 'WEIGHT C' nor 'WEIGHT (TOP - C)' "
                "(e.g. 0.30 P, 0.15 (5 - H))"
            )
    return tuple(terms)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _split_sum(text: str) -> list[str]:
    """Split on ``+`` outside parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "+" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


class Rubric(Frozen):
    """A weighted score over graded criteria, its threshold and per-criterion bounds."""

    name: str = Field(default="Q", pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    formula: str
    threshold: float
    minimums: dict[str, int] = Field(default_factory=dict)
    maximums: dict[str, int] = Field(default_factory=dict)

    @field_validator("formula")
    @classmethod
    def _readable(cls, value: str) -> str:
        parse_formula(value)
        return value

    def multiplier(self) -> str:
        """The formula's multiplier as written (``1`` when it has none)."""
        return parse_formula(self.formula)[0]

    def terms(self) -> tuple[RubricTerm, ...]:
        """The formula's terms, in the order written."""
        return parse_formula(self.formula)[1]

    def criteria(self) -> tuple[str, ...]:
        """Every criterion the rubric reads (formula terms and bounds), in first-use order."""
        seen: dict[str, None] = {}
        for cid in [t.criterion for t in self.terms()] + [*self.minimums, *self.maximums]:
            seen.setdefault(cid, None)
        return tuple(seen)

    def bounds(self) -> tuple[Bound, ...]:
        """Minimums then maximums, each as a :class:`Bound`."""
        return tuple(
            [Bound(criterion=c, op=">=", level=v) for c, v in self.minimums.items()]
            + [Bound(criterion=c, op="<=", level=v) for c, v in self.maximums.items()]
        )

    def bounds_of(self, criterion: str) -> tuple[Bound, ...]:
        """The bounds on one criterion."""
        return tuple(b for b in self.bounds() if b.criterion == criterion)

    def score(self, levels: Mapping[str, int]) -> Fraction:
        """The exact score of these levels (KeyError when a term's level is missing)."""
        total = sum(
            (Fraction(Decimal(t.weight)) * t.value(levels[t.criterion]) for t in self.terms()),
            Fraction(0),
        )
        return Fraction(Decimal(self.multiplier())) * total

    def arithmetic(self, levels: Mapping[str, int]) -> str:
        """The score worked out: ``20 x (0.30 x 4 + … + 0.15 x (5 - 0)) = 20 x 4.15 = 83``."""
        parts = []
        for t in self.terms():
            level = levels[t.criterion]
            shown = str(level) if t.inverted_from is None else f"({t.inverted_from} - {level})"
            parts.append(f"{t.weight} x {shown}")
        inner = sum(
            (Fraction(Decimal(t.weight)) * t.value(levels[t.criterion]) for t in self.terms()),
            Fraction(0),
        )
        return (
            f"{self.name} = {self.multiplier()} x ({' + '.join(parts)}) = "
            f"{self.multiplier()} x {format_number(inner)} = {format_number(self.score(levels))}"
        )

    def display(self) -> str:
        """The formula as it is read: ``Q = 20 x (0.30 P + … + 0.15 (5 - H))``."""
        body = " + ".join(t.text() for t in self.terms())
        mult = self.multiplier()
        return f"{self.name} = {body}" if mult == "1" else f"{self.name} = {mult} x ({body})"

    def max_score(self, scales: Mapping[str, tuple[int, int]]) -> Fraction:
        """The highest score the formula can give on these scales (criterion → (low, high))."""
        best = {
            t.criterion: scales[t.criterion][1 if t.inverted_from is None else 0]
            for t in self.terms()
        }
        return self.score(best)


def format_number(value: Fraction) -> str:
    """An exact value as short decimal text: ``83``, ``4.15``, ``82.5``; else 4 decimals."""
    if value.denominator == 1:
        return str(value.numerator)
    as_decimal = Decimal(value.numerator) / Decimal(value.denominator)
    text = format(as_decimal.quantize(Decimal("0.0001")).normalize(), "f")
    return text


def check_rubric(
    rubric: Rubric, scales: Mapping[str, tuple[int, int] | None], necessary: Mapping[str, bool]
) -> list[str]:
    """What is wrong with a rubric on a task's criteria (empty: nothing).

    ``scales`` maps every criterion id of the task to its scale (None: a pass/fail criterion);
    ``necessary`` says which are necessary. A rubric reads only graded necessary criteria (it
    decides, and only necessary conditions decide); an inverted term inverts at the top of its
    criterion's scale; bounds lie on the scale; the threshold is reachable.
    """
    problems: list[str] = []
    for cid in rubric.criteria():
        if cid not in scales:
            problems.append(f"rubric names criterion {cid}, which the task does not define")
        elif scales[cid] is None:
            problems.append(f"rubric criterion {cid} has no scale (give it scale: 0..5)")
        elif not necessary.get(cid, False):
            problems.append(f"rubric criterion {cid} must be necessary: the rubric decides")
    if problems:
        return problems
    ranges = {c: s for c, s in scales.items() if s is not None}
    for term in rubric.terms():
        low, high = ranges[term.criterion]
        if term.inverted_from is not None and (term.inverted_from, low) != (high, 0):
            problems.append(
                f"formula term {term.text()}: a criterion is inverted at the top of its scale "
                f"({high} - {term.criterion}, scale {low}..{high})"
            )
        if Decimal(term.weight) <= 0:
            problems.append(f"formula term {term.text()}: weights are positive")
    for bound in rubric.bounds():
        low, high = ranges[bound.criterion]
        if not low <= bound.level <= high:
            problems.append(f"bound {bound.text()} lies outside the scale {low}..{high}")
    if not problems:
        top = rubric.max_score(ranges)
        if Fraction(Decimal(str(rubric.threshold))) > top:
            problems.append(
                f"threshold {rubric.threshold:g} is above the highest score {format_number(top)}"
            )
    return problems
