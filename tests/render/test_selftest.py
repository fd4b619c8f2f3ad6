"""The timing self-test fails for a mechanism that does not follow the seek, and leaves nothing
behind: the jobs after it render and log exactly as on a worker that never ran it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from render.selftest import PROFILE, SETUP, SVG, run_selftest
from render.worker import RenderHandler
from tests.helpers.render_pool import CHROMIUM
from tests.render.conftest import animated_task, task

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed"),
]

TIMES = (0.5, 2.75)
DECOY = '<rect id="decoy" x="0" y="170" width="20" height="20" fill="#888888"/>\n</svg>'
# Each variant moves a decoy (outside the measured rows) instead of one mechanism's square: the
# mechanism is present and seeked, but its square stays where it was drawn.
BROKEN: dict[str, tuple[str, dict[str, Any]]] = {
    "smil": (
        SVG.replace('<animate attributeName="x"', '<animate href="#decoy" attributeName="x"'),
        {},
    ),
    "css-animation": (SVG.replace("#css { animation", "#decoy { animation"), {}),
    "css-transition": (SVG, {"transition": "decoy"}),
    "web-animation": (SVG, {"web_animation": "decoy"}),
}


def _handler(self_test: bool) -> RenderHandler:
    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    return create_handler({"chromium_no_sandbox": True, "self_test": self_test})


def _broken_reports(handler: RenderHandler) -> Iterator[tuple[str, dict[str, Any]]]:
    for broken, (svg, setup) in BROKEN.items():
        assert svg.count("decoy") == (0 if setup else 1)
        document = svg.replace("</svg>", DECOY)
        yield broken, run_selftest(handler.session, TIMES, document, {**SETUP, **setup})


def test_a_mechanism_whose_square_does_not_follow_the_seek_fails() -> None:
    handler = _handler(self_test=False)
    try:
        for broken, report in _broken_reports(handler):
            assert report["passed"] is False, broken
            for name, mech in report["mechanisms"].items():
                assert mech["detected"] is True, (broken, name, mech)
                if name == broken:
                    assert mech["passed"] is False and mech["max_error_px"] >= 50, mech
                    assert [s["measured_px"] for s in mech["samples"]] == [0.0, 0.0]
                else:
                    assert mech["passed"] is True and mech["max_error_px"] <= 1.0, (broken, mech)
        # the CSS animation's square moved by SMIL instead: right pixels, no CSS animation seeked
        smil = '<animate attributeName="x" from="0" to="400" dur="4s" repeatCount="indefinite"/>'
        svg = SVG.replace("#css { animation: slide 4s linear infinite; }", "").replace(
            '<rect id="css" x="0" y="50" width="20" height="20" fill="#00a000"/>',
            f'<rect id="css" x="0" y="50" width="20" height="20" fill="#00a000">{smil}</rect>',
        )
        assert svg.count("<animate ") == 2
        report = run_selftest(handler.session, TIMES, svg)
        css = report["mechanisms"]["css-animation"]
        assert report["passed"] is False
        assert css["detected"] is False and css["passed"] is False and css["max_error_px"] <= 1.0
        others = [m for name, m in report["mechanisms"].items() if name != "css-animation"]
        assert all(m["passed"] for m in others), report
        # and the intact self-test passes on the same session afterwards
        assert run_selftest(handler.session, TIMES)["passed"] is True
    finally:
        handler.close()


VARYING = ("cpu_ms", "wall_ms", "elapsed_ms")
VARYING_WORKER = ("startup_ms", "launch_ms", "self_test_passed")


def _jobs() -> list[dict[str, Any]]:
    static = task().to_wire()
    animated = animated_task(required_ids=["pelican", "body"]).to_wire()
    plain = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <rect x="100" y="100" width="100" height="100" fill="#0000ff"/></svg>"""
    moving = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <style>#body { animation: bob 4s linear infinite; }
      @keyframes bob { to { transform: translate(40px, 30px); } }</style>
      <g id="pelican"><rect id="body" x="10" y="100" width="120" height="60" fill="#0000ff">
      <animate attributeName="width" from="120" to="200" dur="4s" repeatCount="indefinite"/>
      </rect><circle cx="600" cy="300" r="80" fill="#00a000"/></g></svg>"""
    navigated = plain.replace("</svg>", '<image href="https://leak.example/x.png"/></svg>')
    return [
        {"kind": "render", "svg": plain, "task": static},
        {"kind": "render", "svg": moving, "task": animated, "masks": True},
        {"kind": "render", "svg": navigated, "task": static},
        {"kind": "render", "svg": moving, "task": animated, "masks": True},
    ]


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The result without its costs and clock readings (``time_ms`` of the logged events)."""
    worker = {k: v for k, v in result["worker"].items() if k not in VARYING_WORKER}
    out = {k: v for k, v in result.items() if k not in VARYING}
    for key in ("blocked_requests", "csp_violations", "navigations"):
        out[key] = [{k: v for k, v in e.items() if k != "time_ms"} for e in result[key]]
    return {**out, "worker": worker}


def test_jobs_after_the_selftest_render_and_log_as_without_it() -> None:
    seen: dict[bool, list[tuple[dict[str, Any], dict[str, bytes]]]] = {}
    for self_test in (True, False):
        handler = _handler(self_test)
        try:
            assert (handler.self_test is not None) is self_test
            if self_test:  # what it left in the shell: an empty root, no animation
                page = handler.session.page_for(PROFILE)
                left = handler.session.evaluate(page, {"op": "inspect_seek", "t": 0.0})
                assert (left["elements"], left["animations"], left["kinds"]) == (1, 0, []), left
            seen[self_test] = [handler.handle(job) for job in _jobs()]
        finally:
            handler.close()
    paths = [result["document"]["path"] for result, _ in seen[True]]
    assert paths == ["swap", "swap", "navigate", "swap"]
    assert seen[True][1][0]["animation"]["kinds"] == ["css-animation", "smil"]
    for (after, after_files), (alone, alone_files) in zip(seen[True], seen[False], strict=True):
        assert after["status"] == "ok" and after_files and after["frames"]
        assert after["frame_reuse"]["captured"] >= 1
        assert after["worker"]["self_test_passed"] is True
        assert after_files == alone_files  # every frame and mask, byte for byte
        assert _comparable(after) == _comparable(alone)
