"""Part masks: visible vs alone, occlusion, hidden elements, nesting, ``use``, stroke-only parts."""

from __future__ import annotations

import pytest

from render.masks import palette
from sandbox import WorkerPool
from tests.render.conftest import STRUCTURED, mask_of, render, task

IDS = [
    "a",
    "b",
    "c",
    "hidden-display",
    "hidden-visibility",
    "hidden-opacity",
    "clipped",
    "missing",
    "group",
    "leaf",
    "used",
    "faint",
    "gradient",
    "ring",
]
SVG = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
  viewBox="0 0 800 600" width="800" height="600">
 <defs>
  <clipPath id="nothing"><rect x="0" y="0" width="0" height="0"/></clipPath>
  <linearGradient id="grad"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#000"/>
  </linearGradient>
  <g id="proto"><rect x="0" y="0" width="40" height="30" fill="#123456"/></g>
 </defs>
 <rect id="a" x="100" y="100" width="200" height="200" fill="#ff0000"/>
 <rect id="b" x="150" y="150" width="100" height="100" fill="#00ff00"/>
 <rect id="c" x="400" y="100" width="100" height="100" fill="#0000ff"/>
 <rect x="450" y="100" width="50" height="100" fill="#fefefe"/>
 <rect id="hidden-display" x="10" y="10" width="50" height="50" style="display:none"/>
 <rect id="hidden-visibility" x="10" y="10" width="50" height="50" visibility="hidden"/>
 <rect id="hidden-opacity" x="10" y="10" width="50" height="50" opacity="0"/>
 <rect id="clipped" x="10" y="10" width="50" height="50" clip-path="url(#nothing)"/>
 <g id="group" opacity="0.5">
  <rect x="600" y="100" width="50" height="50" fill="#999"/>
  <rect id="leaf" x="600" y="200" width="50" height="50" fill="#777"/>
  <rect x="600" y="200" width="25" height="50" fill="#999"/>
 </g>
 <use id="used" xlink:href="#proto" x="100" y="400"/>
 <rect id="faint" x="300" y="400" width="20" height="20" fill="#000" fill-opacity="0.1"/>
 <rect id="gradient" x="400" y="400" width="60" height="60" fill="url(#grad)"/>
 <circle id="ring" cx="650" cy="450" r="50" fill="none" stroke="#000" stroke-width="10"/>
</svg>"""


def test_palette_is_distinct_and_never_white() -> None:
    colours = palette(60)
    assert len(set(colours)) == 60 and (255, 255, 255) not in colours
    with pytest.raises(ValueError):
        palette(1000)


@pytest.mark.browser
@pytest.mark.sandbox
def test_visible_and_alone_masks(render_pool: WorkerPool) -> None:
    out = render(render_pool, SVG, task(STRUCTURED, output={"required_ids": IDS}))
    assert out.status == "ok", out.detail

    def px(part: str, kind: str) -> int:
        return int(mask_of(out, 0.0, part, kind).sum())

    assert px("a", "alone") == 200 * 200
    assert px("a", "visible") == 200 * 200 - 100 * 100  # occluded by part b
    assert px("b", "visible") == px("b", "alone") == 100 * 100
    assert px("c", "alone") == 100 * 100
    assert px("c", "visible") == 50 * 100  # occluded by a near-white non-part rect
    for hidden in ("hidden-display", "hidden-visibility", "hidden-opacity", "clipped", "missing"):
        assert px(hidden, "visible") == 0 and px(hidden, "alone") == 0, hidden
    assert px("leaf", "alone") == 50 * 50
    assert px("leaf", "visible") == 25 * 50  # half covered by its container's own later rect
    assert px("group", "visible") == px("group", "alone") == 2 * 50 * 50  # union with its leaf
    group = mask_of(out, 0.0, "group", "visible")
    assert (group & mask_of(out, 0.0, "leaf", "visible")).sum() == 25 * 50
    assert px("used", "visible") == px("used", "alone") == 40 * 30
    assert mask_of(out, 0.0, "used", "visible")[400:430, 100:140].all()
    assert px("faint", "visible") == 20 * 20  # low opacity is still visible
    assert px("gradient", "visible") == 60 * 60
    ring = px("ring", "visible")
    assert 2800 < ring < 3500 < 3.1416 * 55 * 55  # the stroke only, not the disk
    entries = {(m.part, m.kind): m for m in out.log.masks}
    assert entries[("a", "visible")].pixels == px("a", "visible")
    assert entries[("a", "visible")].name == "mask-0-a-visible.png"


@pytest.mark.browser
@pytest.mark.sandbox
def test_masks_leave_the_frame_untouched(render_pool: WorkerPool) -> None:
    spec = task(STRUCTURED, output={"required_ids": IDS})
    with_masks = render(render_pool, SVG, spec)
    without = render(render_pool, SVG, spec, masks=False)
    assert without.log.masks == [] and without.masks() == ()
    assert with_masks.log.frames[0].sha256 == without.log.frames[0].sha256
