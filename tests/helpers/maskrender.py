"""A test-only mask renderer: Playwright + Debian Chromium, directly (no sandbox).

It produces frames and part masks in the format of ``render.json`` (see docs/contracts.md):
for each part id, a ``visible`` mask (the part painted in a flat colour, everything else painted
black, so occluders, clip paths, display/visibility/opacity all keep their effect) and an
``alone`` mask (everything else painted with nothing). Up to three parts that do not contain
one another share a screenshot, one colour channel each (``lighten`` blending for ``alone``).
Elements under ``<defs>`` get ``inherit`` so that a part drawn through ``<use>`` takes the
colour of its ``use`` element.
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from judges import FrameImage, MaskImage
from tests.helpers.browser import patient

CHROMIUM = os.environ.get("REGUA_CHROMIUM", "/usr/bin/chromium")

PAGE = """<!doctype html><html><head><style>
html,body{margin:0;padding:0;background:%s;overflow:hidden}
svg{display:block;width:%dpx;height:%dpx}
</style></head><body>%s</body></html>"""

PAINT_JS = """
([ids, mode]) => {
  const svg = document.querySelector('svg');
  if (!window.__orig) {
    window.__orig = [svg, ...svg.querySelectorAll('*')].map(e => {
      const cs = getComputedStyle(e);
      return [e, e.getAttribute('style'), cs.fill, cs.stroke];
    });
  }
  document.body.style.background = mode === 'frame' ? window.__bg : '#000';
  for (const [e, st] of window.__orig) {
    if (st === null) e.removeAttribute('style'); else e.setAttribute('style', st);
  }
  if (mode === 'frame') return;
  const colours = ['#f00', '#0f0', '#00f'];
  const parts = ids.map(id => document.getElementById(id));
  for (const [e, st, fill, stroke] of window.__orig) {
    if (e.closest('clipPath,mask,marker,pattern,filter')) continue;
    if (e.closest('defs')) {
      if (fill !== 'none') e.style.setProperty('fill', 'inherit', 'important');
      if (stroke !== 'none') e.style.setProperty('stroke', 'inherit', 'important');
      continue;
    }
    let colour = mode === 'alone' ? 'none' : '#000';
    parts.forEach((p, i) => { if (p !== null && (e === p || p.contains(e))) colour = colours[i]; });
    const isUse = e.tagName === 'use';
    if (fill !== 'none' || isUse) e.style.setProperty('fill', colour, 'important');
    if (stroke !== 'none' || isUse) e.style.setProperty('stroke', colour, 'important');
    // parts drawn alone may overlap each other: add their channels instead of covering
    if (mode === 'alone' && colour !== 'none') e.style.setProperty('mix-blend-mode', 'lighten');
  }
}
"""

NESTED_JS = """
(ids) => ids.map(a => ids.map(b => {
  const x = document.getElementById(a), y = document.getElementById(b);
  return a !== b && x !== null && y !== null && (x.contains(y) || y.contains(x));
}))
"""

SEEK_JS = """
(t) => {
  const svg = document.querySelector('svg');
  if (svg.pauseAnimations) { svg.pauseAnimations(); svg.setCurrentTime(t); }
  for (const a of document.getAnimations()) { a.pause(); a.currentTime = t * 1000; }
}
"""


def chromium_available() -> bool:
    """True when the Debian Chromium binary exists."""
    return shutil.which(CHROMIUM) is not None or os.path.exists(CHROMIUM)


class MaskRenderer:
    """Renders frames and masks with one shared browser page."""

    def __init__(self, page: Any, width: int = 800, height: int = 600) -> None:
        self.page = page
        self.width = width
        self.height = height
        self._cdp = page.context.new_cdp_session(page)

    def _shot(self) -> bytes:
        """A PNG of the viewport (CDP capture: about 2x faster than page.screenshot)."""
        clip = {"x": 0, "y": 0, "width": self.width, "height": self.height, "scale": 1}
        data = self._cdp.send("Page.captureScreenshot", {"format": "png", "clip": clip})
        return base64.b64decode(data["data"])

    def _batches(self, parts: list[str]) -> list[list[str]]:
        """Groups of up to three parts, none containing another (one colour channel each)."""
        nested = self.page.evaluate(NESTED_JS, parts)
        batches: list[list[int]] = []
        for i in range(len(parts)):
            for batch in batches:
                if len(batch) < 3 and not any(nested[i][j] for j in batch):
                    batch.append(i)
                    break
            else:
                batches.append([i])
        return [[parts[i] for i in batch] for batch in batches]

    def render(
        self,
        svg: str,
        parts: Iterable[str],
        times: Iterable[float] = (0.0,),
        background: str = "#ffffff",
    ) -> tuple[list[FrameImage], list[MaskImage]]:
        """Frames and visible/alone masks of ``parts`` at each time (seconds)."""
        page = self.page
        page.set_content(PAGE % (background, self.width, self.height, svg))
        page.evaluate("(bg) => { window.__bg = bg; window.__orig = null; }", background)
        batches = self._batches(list(parts))
        frames: list[FrameImage] = []
        masks: list[MaskImage] = []
        for t in times:
            page.evaluate(SEEK_JS, t)
            ms = round(t * 1000)
            page.evaluate(PAINT_JS, [[], "frame"])
            frames.append(FrameImage(t, self._shot(), f"frame-{ms}.png"))
            for batch in batches:
                for kind in ("visible", "alone"):
                    page.evaluate(PAINT_JS, [batch, kind])
                    shot = self._shot()
                    for channel, part in enumerate(batch):
                        ref = f"mask-{ms}-{part}-{kind}.png"
                        grey = _channel(shot, channel)
                        masks.append(MaskImage(t, part, kind, grey, ref))
            page.evaluate(PAINT_JS, [[], "frame"])
        return frames, masks


def _channel(png: bytes, channel: int) -> bytes:
    """One colour channel (0 red, 1 green, 2 blue) of a screenshot as an 8-bit 0/255 PNG mask,
    like the real renderer's masks."""
    import cv2
    import numpy as np

    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None, "not a PNG"
    plane = img[:, :, 2 - channel]  # OpenCV stores BGR

    out = np.where(plane >= 128, 255, 0).astype(np.uint8)
    ok, buf = cv2.imencode(".png", out)
    assert ok
    return bytes(buf.tobytes())


@contextmanager
def mask_renderer() -> Iterator[MaskRenderer]:
    """A browser-backed :class:`MaskRenderer` (Chromium with --no-sandbox when root)."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        try:
            page = patient(
                browser.new_page(viewport={"width": 800, "height": 600}, device_scale_factor=1)
            )
            yield MaskRenderer(page)
        finally:
            browser.close()
