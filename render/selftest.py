"""Timing self-test: known motion through every seeking mechanism, measured from pixels.

Four squares move right at a known speed (100 px/s, 400 px per 4 s loop): one by SMIL
``<animate>``, one by CSS ``@keyframes``, one by a CSS transition and one by a Web Animation (the
last two are created from outside the page through DevTools, as page scripts never run). At each
sampled time the renderer seeks exactly as it does for real jobs, takes a screenshot and finds the
left edge of each square; it must lie within 1 px of ``100 * t``. The worker runs this at start
and refuses to serve when it fails.

It runs like a job, in the context the jobs use (the default render profile, 800x600: the
self-test's document sits in its top 200 rows), and leaves that context to them: the first job
finds its renderer, swap shell and compiled instrumentation ready instead of replacing a
throwaway context. Afterwards the self-test's animations are cancelled and its tree replaced by
an empty root, as the next job's swap would; a self-test that failed or raised drops the context.
It counts as one of the context's ``context_reuse_jobs`` (at 1, the first job gets a new one).
Each sample is one seek and one capture through the jobs' own path
(:meth:`BrowserSession.screenshot`, never a ``clip``), decoded once for all four rows.
"""

from __future__ import annotations

import io
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from render.browser import BrowserSession
from render.netlog import build_csp
from tasks import AllowedFeatures, RenderProfile

SPEED_PX_S = 100.0
LOOP_S = 4.0
TOLERANCE_PX = 1.0
SAMPLE_TIMES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.75, 3.5)
PROFILE = RenderProfile(id="regua-selftest@2")
"""The default profile, the one every bundled task renders with (the context the jobs reuse)."""
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
SETUP = {"transition": "transition", "web_animation": "waapi", "duration_ms": 4000, "distance": 400}
"""What ``selftest_setup`` of ``instrument.js`` animates from outside the page, and how."""


def decode_rows(png: bytes, rows: tuple[int, ...]) -> NDArray[np.int16]:
    """The RGB pixels of ``rows`` of a PNG (shape: rows x width x 3), from one decode.

    Only the rows are converted and copied out (the whole frame as an array cost 4 ms more).
    """
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        lines = [image.crop((0, y, image.width, y + 1)).convert("RGB") for y in rows]
    return np.stack([np.asarray(line, dtype=np.int16)[0] for line in lines])


def left_edge(line: NDArray[np.int16], colour: tuple[int, int, int]) -> float | None:
    """Leftmost x of ``line`` (width x 3) whose pixel is within 40 of ``colour``."""
    close = np.abs(line - np.array(colour, dtype=np.int16)).max(axis=1) <= 40
    hits = np.flatnonzero(close)
    return float(hits[0]) if hits.size else None


def measure_left_edge(png: bytes, row_y: int, colour: tuple[int, int, int]) -> float | None:
    """Leftmost x (device px) in row ``row_y`` whose pixel is within 40 of ``colour``."""
    return left_edge(decode_rows(png, (row_y,))[0], colour)


def expected_x(time_s: float) -> float:
    """Where every square's left edge should be at ``time_s``."""
    return SPEED_PX_S * (time_s % LOOP_S)


def run_selftest(
    session: BrowserSession,
    times: tuple[float, ...] = SAMPLE_TIMES,
    svg: str = SVG,
    setup: Mapping[str, Any] = SETUP,
) -> dict[str, Any]:
    """Run the self-test on ``session``; returns ``{"passed", "mechanisms", "elapsed_ms"}``.

    ``svg`` and ``setup`` are the document and what is animated from outside it (tests pass
    variants in which a mechanism does not move its square, to see the self-test fail).
    """
    started = time.monotonic()
    csp = build_csp(AllowedFeatures(animation=True))
    mechanisms: dict[str, dict[str, Any]] = {
        name: {"samples": [], "max_error_px": 0.0, "passed": True, "detected": True}
        for name in ROWS
    }
    rows = tuple(row_top + 10 for _, row_top, _ in ROWS.values())
    passed = clean = False
    try:
        page, _, _ = session.open_document(PROFILE, svg, "image/svg+xml", csp, 0.0, 20.0)
        session.evaluate(page, {"op": "selftest_setup", "spec": dict(setup)})
        for time_s in times:
            seek = session.evaluate(page, {"op": "seek", "t": time_s})
            lines = decode_rows(session.screenshot(), rows)
            want = expected_x(time_s)
            for (name, (_, _, colour)), line in zip(ROWS.items(), lines, strict=True):
                found = left_edge(line, colour)
                error = abs(found - want) if found is not None else float("inf")
                entry = mechanisms[name]
                entry["samples"].append(
                    {"time_s": time_s, "expected_px": want, "measured_px": found}
                )
                entry["max_error_px"] = max(float(entry["max_error_px"]), error)
                entry["passed"] = bool(entry["passed"]) and error <= TOLERANCE_PX
                entry["detected"] = bool(entry["detected"]) and name in seek["kinds"]
        for entry in mechanisms.values():
            entry["passed"] = bool(entry["passed"]) and bool(entry["detected"]) and bool(times)
        passed = all(bool(m["passed"]) for m in mechanisms.values())
        # cancels every animation and empties the tree; answers how many animations are left
        clean = passed and session.evaluate(page, {"op": "selftest_teardown"}) == 0
    finally:
        session.finish_job()
        if not clean:
            session.reset()  # a context that failed the test or raised is never reused
    for entry in mechanisms.values():
        if entry["max_error_px"] == float("inf"):
            entry["max_error_px"] = None
    return {
        "passed": passed,
        "tolerance_px": TOLERANCE_PX,
        "mechanisms": mechanisms,
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
    }
