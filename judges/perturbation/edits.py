"""Small tree edits shared by the perturbations (wrap, restyle, move to defs, ...)."""

from __future__ import annotations

from lxml import etree

from judges.perturbation.svgtree import (
    Matrix,
    Point,
    apply_vector,
    fmt,
    invert,
    local_name,
    parent_ctm,
    parse_style,
)


def new_element(
    like: etree._Element, name: str, attrs: dict[str, str] | None = None
) -> etree._Element:
    """A new element in the same namespace as ``like`` (SVG drawings may omit the namespace)."""
    tag = like.tag if isinstance(like.tag, str) else ""
    ns = tag[1:].split("}", 1)[0] if tag.startswith("{") else None
    el = etree.Element(f"{{{ns}}}{name}" if ns else name)
    for key, value in (attrs or {}).items():
        el.set(key, value)
    return el


def wrap(el: etree._Element, transform: str | None = None, **attrs: str) -> etree._Element:
    """Replace ``el`` by a ``<g>`` that contains it; returns the group."""
    parent = el.getparent()
    if parent is None:
        raise ValueError("cannot wrap the root element")
    group = new_element(el, "g")
    if transform is not None:
        group.set("transform", transform)
    for key, value in attrs.items():
        group.set(key.replace("_", "-"), value)
    group.tail = el.tail
    el.tail = None
    parent.replace(el, group)
    group.append(el)
    return group


def remove(el: etree._Element) -> None:
    """Remove an element, keeping the text that followed it in place."""
    parent = el.getparent()
    if parent is None:
        raise ValueError("cannot remove the root element")
    prev = el.getprevious()
    if el.tail:
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def set_style(el: etree._Element, name: str, value: str) -> None:
    """Set a presentation property in ``style`` (drops a same-named attribute so style wins)."""
    style = parse_style(el.get("style"))
    style[name] = value
    if name in el.attrib:
        del el.attrib[name]
    el.set("style", ";".join(f"{k}:{v}" for k, v in style.items()))


def ensure_defs(root: etree._Element) -> etree._Element:
    """The root's first ``<defs>``, created as the first element child when missing."""
    for child in root:
        if local_name(child) == "defs":
            return child
    defs = new_element(root, "defs")
    root.insert(0, defs)
    defs.tail = root.text
    return defs


def unique_id(root: etree._Element, stem: str) -> str:
    """An id not used anywhere in the document, derived from ``stem``."""
    used = {el.get("id") for el in root.iter() if isinstance(el.tag, str)}
    candidate, n = stem, 1
    while candidate in used:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def screen_to_parent(el: etree._Element, vector: Point) -> Point:
    """Convert a displacement in root user space to the coordinates of ``el``'s parent."""
    a, b, c, d, _, _ = parent_ctm(el)
    linear: Matrix = (a, b, c, d, 0.0, 0.0)
    return apply_vector(invert(linear), vector)


def translate_on_screen(el: etree._Element, dx: float, dy: float) -> etree._Element:
    """Wrap ``el`` in a group translating it by ``(dx, dy)`` in root user space."""
    lx, ly = screen_to_parent(el, (dx, dy))
    return wrap(el, f"translate({fmt(lx)} {fmt(ly)})")


def strip_ids(el: etree._Element) -> None:
    """Remove every id in a subtree (used on copies so ids stay unique)."""
    for node in el.iter():
        if isinstance(node.tag, str) and "id" in node.attrib:
            del node.attrib["id"]
