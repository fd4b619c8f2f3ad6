"""Single-factor perturbations of the bundled structured pelican, built with lxml."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lxml import etree

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "outputs" / "structured-good.svg"
WHEEL_DIAMETER_PX = 188.0  # r = 90 plus half of the 8 px stroke on each side

Edit = Callable[[etree._Element], None]


def q(tag: str) -> str:
    return f"{{{SVG_NS}}}{tag}"


def by_id(root: etree._Element, ident: str) -> etree._Element:
    found = root.xpath(f"//*[@id='{ident}']")
    assert isinstance(found, list) and found, ident
    el = found[0]
    assert isinstance(el, etree._Element)
    return el


def sample_text() -> str:
    return SAMPLE.read_text()


def build(*edits: Edit) -> str:
    """The sample with edits applied, as SVG text."""
    root = etree.fromstring(SAMPLE.read_bytes())
    for edit in edits:
        edit(root)
    return etree.tostring(root, encoding="unicode")


def move_up(part: str, fraction: float) -> Edit:
    """Move a part up by ``fraction`` of the wheel diameter (away from the pedal below it)."""

    def edit(root: etree._Element) -> None:
        el = by_id(root, part)
        dy = fraction * WHEEL_DIAMETER_PX
        el.set("transform", f"translate(0 {-dy:.3f}) {el.get('transform', '')}".strip())

    return edit


def clip_away(part: str) -> Edit:
    def edit(root: etree._Element) -> None:
        defs = etree.SubElement(root, q("defs"))
        clip = etree.SubElement(defs, q("clipPath"), id="tiny-clip")
        etree.SubElement(clip, q("rect"), x="0", y="0", width="1", height="1")
        by_id(root, part).set("clip-path", "url(#tiny-clip)")

    return edit


def occlude(x: int, y: int, w: int, h: int, fill: str = "#eaf4fb") -> Edit:
    """Draw an opaque rectangle on top of everything."""

    def edit(root: etree._Element) -> None:
        attrs = {"x": str(x), "y": str(y), "width": str(w), "height": str(h), "fill": fill}
        etree.SubElement(root, q("rect"), attrs)

    return edit


def style(part: str, css: str) -> Edit:
    def edit(root: etree._Element) -> None:
        by_id(root, part).set("style", css)

    return edit


def wheel_as_path(root: etree._Element) -> None:
    old = by_id(root, "wheel-front")
    cx, cy, r = (float(old.get(k, "0")) for k in ("cx", "cy", "r"))
    d = f"M{cx - r} {cy} A{r} {r} 0 1 0 {cx + r} {cy} A{r} {r} 0 1 0 {cx - r} {cy} Z"
    new = etree.Element(q("path"), id="wheel-front", d=d, stroke="#333")
    new.set("stroke-width", "8")
    new.tail = old.tail
    parent = old.getparent()
    assert parent is not None
    parent.replace(old, new)


def wheel_via_use(root: etree._Element) -> None:
    old = by_id(root, "wheel-front")
    defs = etree.Element(q("defs"))
    shape = etree.SubElement(defs, q("circle"), id="wheel-shape", cx="0", cy="0", r="90")
    shape.set("fill", "none")
    shape.set("stroke", "#333")
    shape.set("stroke-width", "8")
    root.insert(0, defs)
    use = etree.Element(q("use"), id="wheel-front", x=old.get("cx", "0"), y=old.get("cy", "0"))
    use.set("href", "#wheel-shape")
    use.tail = old.tail
    parent = old.getparent()
    assert parent is not None
    parent.replace(old, use)


def wrap_all(transform: str) -> Edit:
    """Wrap every drawn child of the root in a group with this transform."""

    def edit(root: etree._Element) -> None:
        group = etree.Element(q("g"), transform=transform)
        for child in [c for c in root if c.tag != q("title")]:
            group.append(child)
        root.append(group)

    return edit


def nested_transforms(root: etree._Element) -> None:
    """Scale the whole drawing by 0.8 about its centre through three nested groups, and put the
    left foot inside two groups whose translations cancel out."""
    for transform in ("translate(-400 -300)", "scale(0.8)", "translate(400 300)"):
        wrap_all(transform)(root)
    foot = by_id(root, "foot-left")
    parent = foot.getparent()
    assert parent is not None
    g1 = etree.Element(q("g"), transform="translate(30 -12)")
    g2 = etree.SubElement(g1, q("g"), transform="translate(-30 12)")
    parent.replace(foot, g1)
    g2.append(foot)


def mirror(root: etree._Element) -> None:
    wrap_all("translate(800 0) scale(-1 1)")(root)


def background(root: etree._Element) -> None:
    rects = [c for c in root if c.tag == q("rect")]
    rects[0].set("fill", "#1d2b3a")
    rects[1].set("fill", "#6b4f2a")
