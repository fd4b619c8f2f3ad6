"""What the layer estimate reads of an element: its layer properties, references, visibility.

Helpers of :mod:`checks.paint_cost`, and the cheap text gates that decide whether a document is
walked at all. Pure.
"""

from __future__ import annotations

from lxml import etree

from checks.vocab import SVG_NS, XLINK_NS, attr_items

PROPS = frozenset({"mask", "clip-path", "filter", "opacity", "fill", "stroke"})
PAINTS = frozenset({"fill", "stroke"})
READ = frozenset({"mask", "clip-path", "filter", "opacity", "style"})
"""Attributes that make an element worth reading (with ``fill``/``stroke`` when there are
patterns)."""
_LOCALS: dict[str, str] = {}
NOT_PAINTED = frozenset(
    {
        "defs",
        "mask",
        "clipPath",
        "pattern",
        "filter",
        "symbol",
        "marker",
        "linearGradient",
        "radialGradient",
        "style",
        "script",
        "title",
        "desc",
        "metadata",
        "foreignObject",
    }
)
"""Elements (and their subtrees) that are not painted where they stand."""
GROUPS = frozenset({"g", "a", "svg", "use", "switch"})
"""Elements whose ``opacity`` below 1 composites their content through a layer."""
GROUP_TAGS = tuple(f"{{{SVG_NS}}}{name}" for name in sorted(GROUPS))
HREFS = ("href", f"{{{XLINK_NS}}}href")


def local_of(el: etree._Element) -> str:
    """The local name of an element's tag ("" for a comment or processing instruction)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    local = _LOCALS.get(tag)
    if local is None:
        local = tag.rpartition("}")[2]
        if len(_LOCALS) < 4096:
            _LOCALS[tag] = local
    return local


def layer_props(el: etree._Element) -> dict[str, str]:
    """The layer-relevant properties of an element (its ``style`` wins over attributes).

    A ``fill`` or ``stroke`` counts only when it references something (``url(``).
    """
    out = {k: v for k, v in attr_items(el) if k in PROPS and (k not in PAINTS or "url(" in v)}
    style = el.get("style")
    if style and ("url(" in style or "opacity" in style):
        for decl in style.split(";"):
            name, _, value = decl.partition(":")
            name = name.strip().lower()
            if name in PROPS:
                out[name] = value.replace("!important", "").strip()
    return out


def hidden(el: etree._Element, top: etree._Element) -> bool:
    """Whether ``el`` is (inside) an element not painted where it stands, up to ``top``."""
    node: etree._Element | None = el
    while node is not None:
        if local_of(node) in NOT_PAINTED:
            return True
        if node is top:
            return False
        node = node.getparent()
    return False


def href_of(el: etree._Element) -> str | None:
    """The id a ``href`` (or ``xlink:href``) of the form ``#id`` points to."""
    for name in HREFS:
        value = el.get(name)
        if value and value.strip().startswith("#"):
            return value.strip()[1:]
    return None


def sets_opacity(text: str) -> bool:
    """Whether ``opacity`` itself (not ``fill-opacity`` and the like) is set anywhere.

    Lower- and upper-case spellings are read (a mixed-case CSS name is not: docs/security.md).
    """
    for word in ("opacity", "OPACITY"):
        if word not in text or text.count(word) == text.count("-" + word):
            continue  # absent, or only fill-, stroke-, stop-opacity...
        i = text.find(word)
        while i >= 0:
            before = text[i - 1] if i else " "
            after = text[i + 7 : i + 16].lstrip()
            if before not in "-_" and not before.isalnum() and after[:1] in ("=", ":"):
                return True
            i = text.find(word, i + 7)
    return False
