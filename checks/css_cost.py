"""Selector work: a static estimate of what matching a drawing's ``<style>`` sheets costs.

Part of the ``render-cost`` check. A style sheet is matched against every
element, so a few KB of selectors over a few thousand elements is millions of matching steps, and
``:has()`` makes each step a walk of the tree again. The estimate, in *selector-steps*, is for
every selector of every rule (``@`` rules' own preludes aside; their nested rules count):

    elements x cost(selector)

where cost(selector) is 1 per simple selector (type, ``#id``, ``.class``, ``[attribute]``,
pseudo-class), plus the tree depth per descendant or general-sibling combinator (the ancestors or
siblings it may try), plus for each functional pseudo-class the cost of its argument (``:not``,
``:is``, ``:where``, ``:nth-child(... of S)``) or, for ``:has()``, elements x the cost of its
argument (it is matched against the subtree of every candidate: nested ``:has`` multiplies).
Comments are ignored. Pure; the text is read at most once per style element.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

MAX_SELECTOR_TEXT = 200_000
"""Characters of style sheets read at most (the size check bounds the document anyway)."""
MAX_COST = 2**62
MAX_NESTING = 32
"""Functional pseudo-classes nested deeper than this cost :data:`MAX_COST`."""
_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.S)
_SIMPLE = re.compile(r"[#.:\[]|(?:^|(?<=[\s>+~(,]))[A-Za-z*|_-]")
_FUNCTION = re.compile(r":(?:has|not|is|where|matches|nth-child|nth-last-child|host)\(", re.I)
_ATTRIBUTE = re.compile(r"\[[^\]\[]{0,1000}\]")
_AROUND = re.compile(r" ?([>+~]) ?")
_KEEP = r"\1"


@dataclass(frozen=True, slots=True)
class SelectorCost:
    """The estimate for one document's style sheets."""

    steps: int
    selectors: int
    worst: str
    """The costliest selector (its first 80 characters)."""


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets and parentheses."""
    if "(" not in text and "[" not in text:
        return text.split(sep)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def selector_cost(selector: str, elements: int, depth: int, level: int = 0) -> int:
    """The matching steps one selector costs per element it is tried on (see the module).

    Arguments nested more than :data:`MAX_NESTING` deep are not read: the selector costs
    :data:`MAX_COST` (no renderer needs them; a bomb does).
    """
    if level > MAX_NESTING:
        return MAX_COST
    if "(" not in selector and " " not in selector and "~" not in selector:
        if ">" not in selector and "+" not in selector:  # one compound: its simple selectors
            typed = selector[:1].isalpha() or selector[:1] in "*|_"
            return max(sum(map(selector.count, "#.:[")) + typed, 1)
        return max(len(_SIMPLE.findall(selector)), 1)
    cost, outer, i = 0, [], 0
    while i < len(selector):
        m = _FUNCTION.search(selector, i)
        if m is None:
            outer.append(selector[i:])
            break
        outer.append(selector[i : m.start() + 1])
        end, open_parens = m.end(), 1
        while end < len(selector) and open_parens:
            open_parens += {"(": 1, ")": -1}.get(selector[end], 0)
            end += 1
        inner = selector[m.end() : end - 1]
        args = [a for a in _split(inner, ",") if a.strip()]
        sub = sum(selector_cost(a, elements, depth, level + 1) for a in args) or 1
        cost += elements * sub if m.group(0).lower().startswith(":has") else sub
        cost = min(cost, MAX_COST)
        i = end
    plain = "".join(outer)
    cost += len(_SIMPLE.findall(plain))
    if " " in plain or "~" in plain:
        squeezed = _AROUND.sub(_KEEP, _ATTRIBUTE.sub("[]", " ".join(plain.split())))
        cost += depth * (squeezed.count(" ") + squeezed.count("~"))
    return min(max(cost, 1), MAX_COST)


def selectors_of(sheet: str) -> list[str]:
    """Every selector of every rule in ``sheet`` (comments removed, ``@`` preludes skipped)."""
    out: list[str] = []
    text = _COMMENT.sub(" ", sheet) if "/*" in sheet else sheet
    for chunk in text.split("{")[:-1]:
        prelude = chunk[max(chunk.rfind("}"), chunk.rfind(";")) + 1 :].strip()
        if prelude and not prelude.startswith("@"):
            out += [s.strip() for s in _split(prelude, ",") if s.strip()]
    return out


def sheet_cost(styles: list[etree._Element], elements: int, depth: int) -> SelectorCost:
    """The selector-steps of the ``<style>`` elements ``styles`` over ``elements`` elements.

    ``depth`` bounds the ancestors a descendant combinator may try (the task's depth limit: a
    deeper document fails the size check anyway).
    """
    sheet = "\n".join(str(t) for s in styles for t in s.itertext())[:MAX_SELECTOR_TEXT]
    selectors = selectors_of(sheet)
    if not selectors:
        return SelectorCost(0, 0, "")
    total, worst, worst_cost = 0, "", -1
    for sel in selectors:
        if sel[0].isdigit() or sel.lower() in ("from", "to"):  # keyframe selectors
            continue
        cost = elements * selector_cost(sel, elements, depth)
        total = min(total + cost, MAX_COST)
        if cost > worst_cost:
            worst, worst_cost = sel[:80], cost
    return SelectorCost(total, len(selectors), worst)
