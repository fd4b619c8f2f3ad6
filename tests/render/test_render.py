"""Rendering through the sandboxed pool: contract shape, determinism, scripts, requests, fonts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from sandbox import WorkerPool
from tests.render.conftest import STRUCTURED, colour_mask, render, rgb, task

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

SCRIPTED = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600"
  onload="document.documentElement.setAttribute('data-onload', '1')">
 <script>
  document.documentElement.setAttribute('data-script', '1');
  document.getElementById('box').setAttribute('fill', '#00ff00');
  fetch('https://leaking.via/script-fetch');
  new Image().src = 'https://leaking.via/script-image';
 </script>
 <rect id="box" x="100" y="100" width="200" height="200" fill="#ff0000"/>
 <image href="https://leaking.via/svg-image" x="0" y="0" width="10" height="10"/>
 <style>@import url(https://leaking.via/css-import); rect { stroke: none; }</style>
</svg>"""


def test_static_render_contract(render_pool: WorkerPool, samples_dir: Path) -> None:
    svg = (samples_dir / "outputs" / "structured-good.svg").read_text()
    out = render(render_pool, svg, task(STRUCTURED))
    assert out.status == "ok", out.detail
    log = out.log
    measured = {k: log.sandbox[k] for k in ("backend", "measured", "uid", "network")}
    assert measured == {
        "backend": "bubblewrap",
        "measured": True,
        "uid": 65534,
        "network": "loopback-only",
    }
    assert log.render_profile_id == "svg-800x600-dpr1@1"
    assert log.browser_version is not None and log.browser_version.split(".")[0].isdigit()
    assert log.animation is not None
    assert log.animation.model_dump() == {"detected": False, "kinds": []}
    assert log.script_executed is False and log.blocked_requests == []
    assert log.model_dump()["elapsed_ms"] > 0
    [frame] = log.frames
    assert frame.time_s == 0.0 and frame.name == "frame-0.png"
    png = out.files["frame-0.png"]
    assert hashlib.sha256(png).hexdigest() == frame.sha256
    assert rgb(png).shape == (600, 800, 3)
    assert rgb(png)[5, 5].tolist() == [0xEA, 0xF4, 0xFB]  # the sample's sky colour
    ids = task(STRUCTURED).output.required_ids
    assert {(m.part, m.kind) for m in log.masks} == {
        (p, k) for p in ids for k in ("visible", "alone")
    }
    assert all(m.name in out.files for m in log.masks)
    # what judges see: the same bytes, addressed by their sha256
    [image] = out.frames()
    assert (image.time_s, image.png, image.artifact_ref) == (0.0, png, frame.sha256)
    assert len(out.masks()) == len(log.masks)


def test_same_input_same_pixels(render_pool: WorkerPool, samples_dir: Path) -> None:
    svg = (samples_dir / "outputs" / "structured-good.svg").read_text()
    shas = {render(render_pool, svg).log.frames[0].sha256 for _ in range(3)}
    assert len(shas) == 1


def test_page_scripts_never_run_and_requests_are_logged(render_pool: WorkerPool) -> None:
    for spec in (task(), task(output={"allowed": {"animation": True}})):
        out = render(render_pool, SCRIPTED, spec)
        assert out.status == "ok", out.detail
        log = out.log
        assert log.script_executed is False
        assert log.document is not None
        assert log.document.scripts == 1  # the script element is there, it just never ran
        box = colour_mask(out.files["frame-0.png"], (255, 0, 0), tol=10)
        assert box[150:250, 150:250].all(), "the script changed the drawing"
        assert not colour_mask(out.files["frame-0.png"], (0, 255, 0), tol=10).any()
        urls = {r.url for r in log.blocked_requests}
        assert "https://leaking.via/svg-image" in urls
        assert "https://leaking.via/css-import" in urls
        assert not any("script-" in u for u in urls), "a script made a request"
        entries = [r.model_dump() for r in log.blocked_requests]
        assert {e["via"] for e in entries} <= {"route", "csp", "devtools"}
        for entry in entries:
            assert set(entry) >= {"url", "resource_type", "time_ms", "via"}


def test_endless_smil_loop_in_static_task_is_paused_at_zero(render_pool: WorkerPool) -> None:
    svg = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <rect x="0" y="0" width="100" height="100" fill="#0000ff">
        <animate attributeName="x" values="0;700;0" dur="0.01s" repeatCount="indefinite"/>
      </rect></svg>"""
    out = render(render_pool, svg)
    assert out.status == "ok"
    blue = colour_mask(out.files["frame-0.png"], (0, 0, 255), tol=10)
    xs = np.nonzero(blue)[1]
    assert xs.min() == 0 and xs.max() == 99
    assert out.log.animation is not None
    assert out.log.animation.model_dump() == {"detected": True, "kinds": ["smil"]}


def test_fonts_are_the_fixed_dejavu_set(render_pool: WorkerPool) -> None:
    def text_svg(family: str) -> str:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">'
            f'<text x="20" y="200" font-size="60" font-family="{family}">Pelican 123</text></svg>'
        )

    def sha(family: str) -> str:
        return render(render_pool, text_svg(family)).log.frames[0].sha256

    sans = {sha(f) for f in ("DejaVu Sans", "sans-serif", "Arial", "Helvetica")}
    # Liberation Sans is installed on the host but not in the render font set: it falls back
    # like any unknown family, to Chromium's standard (serif) font, DejaVu Serif.
    serif = {sha(f) for f in ("DejaVu Serif", "serif", "Liberation Sans", "NoSuchFont")}
    assert len(sans) == 1 and len(serif) == 1
    assert sans != serif


def test_xml_error_is_reported_not_hidden(render_pool: WorkerPool) -> None:
    out = render(render_pool, '<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>')
    assert out.status == "ok"
    assert any(e.kind == "parse_error" for e in out.log.errors)


def test_device_scale_and_viewport_follow_the_profile(render_pool: WorkerPool) -> None:
    spec = task(
        render={
            "id": "test-400x300-dpr2@1",
            "viewport_width": 400,
            "viewport_height": 300,
            "device_scale_factor": 2.0,
        }
    )
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"/>'
    out = render(render_pool, svg, spec)
    assert rgb(out.files["frame-0.png"]).shape == (600, 800, 3)
    assert out.log.render_profile_id == "test-400x300-dpr2@1"
