"""Controlled timestamps: the timing self-test and pelican-style motion at 8 timestamps."""

from __future__ import annotations

import math

import pytest

from render.selftest import ROWS, expected_x, measure_left_edge
from sandbox import WorkerPool
from tests.render.conftest import animated_task, centroid, colour_mask, mask_of, render

PIVOT = (390.0, 440.0)
RADIUS = 60.0


def test_expected_positions_helper() -> None:
    assert expected_x(0.0) == 0.0 and expected_x(1.5) == 150.0 and expected_x(4.25) == 25.0


@pytest.mark.browser
@pytest.mark.sandbox
def test_selftest_passes_for_all_four_mechanisms(render_pool: WorkerPool) -> None:
    outcome = render_pool.run({"kind": "selftest"})
    assert outcome.ok, outcome.detail
    result = outcome.result
    assert result is not None and result["passed"] is True, result

    assert (
        set(result["mechanisms"])
        == set(ROWS)
        == {"smil", "css-animation", "css-transition", "web-animation"}
    )
    for name, mech in result["mechanisms"].items():
        assert mech["detected"], name
        assert mech["max_error_px"] <= 1.0, (name, mech)
        assert len(mech["samples"]) == 8
        assert all(s["measured_px"] is not None for s in mech["samples"])


def test_measure_left_edge_reads_pixels() -> None:
    import io

    from PIL import Image

    image = Image.new("RGB", (100, 20), "white")
    for x in range(37, 57):
        image.putpixel((x, 5), (255, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    assert measure_left_edge(buffer.getvalue(), 5, (255, 0, 0)) == 37.0
    assert measure_left_edge(buffer.getvalue(), 6, (255, 0, 0)) is None


PELICAN = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600">
 <style>
  #body { animation: bob 4s linear infinite; }
  @keyframes bob { 0% { transform: translateY(0px); } 50% { transform: translateY(40px); }
                   100% { transform: translateY(0px); } }
 </style>
 <g id="bicycle">
  <circle id="wheel-rear" cx="250" cy="430" r="90" fill="none" stroke="#333333" stroke-width="8"/>
  <g id="crank">
   <animateTransform attributeName="transform" type="rotate" from="0 390 440" to="360 390 440"
     dur="4s" repeatCount="indefinite"/>
   <line x1="390" y1="440" x2="450" y2="440" stroke="#777777" stroke-width="6"/>
   <circle id="pedal-left" cx="450" cy="440" r="9" fill="#ff0000"/>
  </g>
 </g>
 <g id="pelican"><ellipse id="body" cx="380" cy="200" rx="60" ry="40" fill="#0000ff"/></g>
</svg>"""


@pytest.mark.browser
@pytest.mark.sandbox
@pytest.mark.parametrize("path", ["swap", "navigate"])
def test_pelican_style_animation_at_eight_timestamps(render_pool: WorkerPool, path: str) -> None:
    spec = animated_task(required_ids=["pelican", "body", "bicycle", "crank", "pedal-left"])
    times = spec.timestamps()
    assert len(times) == 8
    svg = PELICAN
    if path == "navigate":  # an external reference forces the navigation path
        svg = svg.replace(
            "</svg>", '<image href="https://leaking.via/x" width="1" height="1"/></svg>'
        )
    out = render(render_pool, svg, spec)
    assert out.status == "ok", out.detail
    assert out.log.document is not None and out.log.document.path == path
    assert out.log.animation is not None
    assert out.log.animation.model_dump() == {"detected": True, "kinds": ["css-animation", "smil"]}
    assert [f.time_s for f in out.log.frames] == list(times)
    for entry in out.log.frames:
        time_s, png = entry.time_s, out.files[entry.name]
        assert entry.name == f"frame-{round(time_s * 1000)}.png"
        angle = 2 * math.pi * (time_s % 4.0) / 4.0
        want = (PIVOT[0] + RADIUS * math.cos(angle), PIVOT[1] + RADIUS * math.sin(angle))
        got = centroid(colour_mask(png, (255, 0, 0), tol=60))
        assert math.dist(got, want) <= 1.0, (time_s, got, want)
        phase = (time_s % 4.0) / 4.0
        bob = 80 * phase if phase <= 0.5 else 80 * (1 - phase)
        body = centroid(colour_mask(png, (0, 0, 255), tol=60))
        assert abs(body[1] - (200 + bob)) <= 1.0, (time_s, body)
        pedal = centroid(mask_of(out, time_s, "pedal-left", "visible"))
        assert math.dist(pedal, want) <= 1.0, (time_s, pedal, want)
        assert abs(centroid(mask_of(out, time_s, "body", "visible"))[1] - (200 + bob)) <= 1.0
