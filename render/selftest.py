"""Timing self-test: known motion through every seeking mechanism, measured from pixels.

Four squares move right at a known speed (100 px/s, 400 px per 4 s loop): one by SMIL
``<animate>``, one by CSS ``@keyframes``, one by a CSS transition and one by a Web Animation (the
last two are created from outside the page through DevTools, as page scripts never run). At each
sampled time the renderer seeks exactly as it does for real jobs, takes a screenshot and finds the
left edge of each square; it must lie within 1 px of ``100 * t``. The worker runs this at start
and refuses to serve when it fails.
"""

from __future__ import annotations

import io
import time
from typing import Any

import numpy as np
from PIL import Image

from render.browser import BrowserSession
from render.netlog import build_csp
from tasks import AllowedFeatures, RenderProfile

SPEED_PX_S = 100.0
LOOP_S = 4.0
TOLERANCE_PX = 1.0
SAMPLE_TIMES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.75, 3.5)
PROFILE = RenderProfile(id="regua-selftest@1", viewport_width=800, viewport_height=200)
ROWS = {  # mechanism -> (element id, row top y, colour)
    "smil": ("smil", 10, (255, 0, 0)),
    "css-animation": ("css", 50, (0, 160, 0)),
    "css-transition": ("transition", 90, (0, 0, 255)),
    "web-animation": ("waapi", 130, (0, 0, 0)),
}
SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="800" height="200" viewBox="0 0 800 200"
 shape-rendering="crispEdges">
<style>
 #css { animation: slide 4s linear infinite; }
 @keyframes slide { from { transform: translateX(0px); } to { transform: translateX(400px); } }
</style>
<rect width="800" height="200" fill="#ffffff"/>
<rect id="smil" x="0" y="10" width="20" height="20" fill="#ff0000">
 <animate attributeName="x" from="0" to="400" dur="4s" repeatCount="indefinite"/>
</rect>
<rect id="css" x="0" y="50" width="20" height="20" fill="#00a000"/>
<rect id="transition" x="0" y="90" width="20" height="20" fill="#0000ff"/>
<rect id="waapi" x="0" y="130" width="20" height="20" fill="#000000"/>
</svg>"""


def measure_left_edge(png: bytes, row_y: int, colour: tuple[int, int, int]) -> float | None:
    """Leftmost x (device px) in row ``row_y`` whose pixel is within 40 of ``colour``."""
    with Image.open(io.BytesIO(png)) as image:
        rgb = np.asarray(image.convert("RGB"), dtype=np.int16)
    line = rgb[row_y]
    close = np.abs(line - np.array(colour, dtype=np.int16)).max(axis=1) <= 40
    hits = np.flatnonzero(close)
    return float(hits[0]) if hits.size else None


def expected_x(time_s: float) -> float:
    """Where every square's left edge should be at ``time_s``."""
    return SPEED_PX_S * (time_s % LOOP_S)


def run_selftest(
    session: BrowserSession, times: tuple[float, ...] = SAMPLE_TIMES
) -> dict[str, Any]:
    """Run the self-test on ``session``; returns ``{"passed", "mechanisms", "elapsed_ms"}``."""
    started = time.monotonic()
    csp = build_csp(AllowedFeatures(animation=True))
    mechanisms: dict[str, dict[str, Any]] = {
        name: {"samples": [], "max_error_px": 0.0, "passed": True} for name in ROWS
    }
    try:
        page, _, _ = session.open_document(PROFILE, SVG, "image/svg+xml", csp, 0.0, 20.0)
        spec = {"transition": "transition", "web_animation": "waapi", "duration_ms": 4000}
        session.evaluate(page, {"op": "selftest_setup", "spec": {**spec, "distance": 400}})
        for time_s in times:
            seek = session.evaluate(page, {"op": "seek", "t": time_s})
            png = session.screenshot()
            for name, (_, row_top, colour) in ROWS.items():
                found = measure_left_edge(png, row_top + 10, colour)
                want = expected_x(time_s)
                error = abs(found - want) if found is not None else float("inf")
                entry = mechanisms[name]
                entry["samples"].append(
                    {"time_s": time_s, "expected_px": want, "measured_px": found}
                )
                entry["max_error_px"] = max(float(entry["max_error_px"]), error)
                entry["passed"] = bool(entry["passed"]) and error <= TOLERANCE_PX
                entry["detected"] = name in seek["kinds"]
    finally:
        session.finish_job()
        session.reset()
    for entry in mechanisms.values():
        entry["passed"] = bool(entry["passed"]) and bool(entry.get("detected"))
        if entry["max_error_px"] == float("inf"):
            entry["max_error_px"] = None
    return {
        "passed": all(bool(m["passed"]) for m in mechanisms.values()),
        "tolerance_px": TOLERANCE_PX,
        "mechanisms": mechanisms,
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
    }
