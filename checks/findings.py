"""Where the shared walk records what it found: :class:`Scan`, located evidence, element paths."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lxml import etree

from checks.types import Evidence, clip
from checks.vocab import attr_values, local_name, src_line

MAX_EVIDENCE = 25


def element_path(el: etree._Element) -> str:
    """A readable path such as ``/svg[1]/g[2]/path[1]`` (local names, same-name index)."""
    parent = el.getparent()
    if parent is None and isinstance(el.tag, str):  # a root: its siblings are never elements
        return f"/{local_name(el.tag)}[1]"
    parts: list[str] = []
    node: etree._Element | None = el
    while node is not None:
        tag = node.tag
        if isinstance(tag, str):
            index = 1 + sum(1 for _ in node.itersiblings(tag, preceding=True))
            parts.append(f"{local_name(tag)}[{index}]")
        else:
            parts.append("node()")
        node = node.getparent()
    return "/" + "/".join(reversed(parts))


def ev(el: etree._Element, message: str, snippet: str | None = None) -> Evidence:
    """Evidence located at an element (line and path), with an optional clipped snippet."""
    return Evidence(message, src_line(el), element_path(el), clip(snippet) if snippet else None)


@dataclass(slots=True)
class Scan:
    """Everything the built-in checks read, gathered in one walk.

    ``longest_value`` is computed on first use from the attribute values the walk kept;
    ``value_bound`` is a cheap upper bound of it (a check compares the bound with its limit
    first). ``tracked`` holds, for every tag of ``tracking`` (what :func:`checks.scan.track_tag`
    asked for when the walk ran), its elements in document order (complete unless
    ``truncated``).
    """

    findings: dict[str, list[Evidence]] = field(default_factory=dict)
    overflow: dict[str, int] = field(default_factory=dict)
    element_count: int = 0
    uses_local_refs: bool = False
    truncated: bool = False
    value_bound: int = 0
    tracked: dict[str, list[etree._Element]] = field(default_factory=dict)
    tracking: frozenset[str] = frozenset()
    _longest: int = 0
    _unmeasured: list[etree._Element] = field(default_factory=list, repr=False)

    @property
    def longest_value(self) -> int:
        """Length of the longest attribute value the walk saw."""
        for el in self._unmeasured:
            for value in attr_values(el):
                self._longest = max(self._longest, len(value))
        self._unmeasured.clear()
        return self._longest

    def note_values(self, values: list[str]) -> None:
        """Account for the attribute values of one element inspected one by one."""
        if values:
            self._longest = max(self._longest, *map(len, values))
            self.value_bound = max(self.value_bound, self._longest)

    def pool_values(self, elements: list[etree._Element], joined_length: int) -> None:
        """Account for the attribute values of ``elements``, ``joined_length`` characters in all.

        Each value is measured only if ``longest_value`` is asked for.
        """
        self._unmeasured.extend(elements)
        self.value_bound = max(self.value_bound, joined_length)

    def pool_measured(self, joined_length: int, longest: int) -> None:
        """:meth:`pool_values` for values already measured: the longest is ``longest`` long."""
        self._longest = max(self._longest, longest)
        self.value_bound = max(self.value_bound, joined_length)

    def add(
        self,
        check: str,
        where: etree._Element | Evidence,
        message: str = "",
        snippet: str | None = None,
        line: int | None = None,
    ) -> None:
        """Record evidence for a check: an Evidence, or an element plus message and snippet.

        The element path is only computed for the first MAX_EVIDENCE items; the rest are counted.
        """
        items = self.findings.setdefault(check, [])
        if len(items) >= MAX_EVIDENCE:
            self.overflow[check] = self.overflow.get(check, 0) + 1
        elif isinstance(where, Evidence):
            items.append(where)
        else:
            found = ev(where, message, snippet)
            items.append(found if line is None else replace(found, line=line))

    def get(self, check: str) -> tuple[Evidence, ...]:
        """Evidence recorded for a check (with a trailing note when some were left out)."""
        items = self.findings.get(check)
        if not items:
            return ()
        found = tuple(items)
        more = self.overflow.get(check, 0)
        if more:
            found += (Evidence(f"... and {more} more of the same kind"),)
        return found
