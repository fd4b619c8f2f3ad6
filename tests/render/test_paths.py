"""The swap fast path renders exactly like navigation and leaves nothing behind for the next job."""

from __future__ import annotations

import os

import pytest

from render.netlog import swappable
from sandbox import WorkerPool
from tests.conftest import corpus_dir
from tests.helpers.render_pool import CHROMIUM
from tests.render.conftest import colour_mask, render, task


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(#g)"/></svg>', True),
        ('<svg xmlns="http://www.w3.org/2000/svg"><use href="#a"/></svg>', True),
        ('<svg xmlns="http://www.w3.org/2000/svg"><use href="b.svg#a"/></svg>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(x.svg#g)"/></svg>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>', False),
        ('<?xml-stylesheet href="a.css"?><svg xmlns="http://www.w3.org/2000/svg"/>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg"><style>@import "a.css";</style></svg>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg"><image href="data:x"/></svg>', False),
        ('<svg xmlns="http://www.w3.org/2000/svg"><a href="#top"><rect/></a></svg>', False),
    ],
)
def test_swappable_only_without_fetch_or_script_vectors(text: str, expected: bool) -> None:
    assert swappable(text) is expected


@pytest.mark.browser
@pytest.mark.sandbox
def test_nothing_survives_a_swap(render_pool: WorkerPool) -> None:
    hostile = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <style>svg { background: #ff0000; } rect { fill: #ff0000 !important; }
      @keyframes k { to { fill: #ff0000; } } * { animation: k 1s; }</style>
      <rect width="10" height="10"/></svg>"""
    plain = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <rect x="100" y="100" width="100" height="100" fill="#0000ff"/></svg>"""
    for _ in range(3):  # both workers see the hostile document at least once
        render(render_pool, hostile)
        out = render(render_pool, plain)
        assert out.log.document is not None and out.log.document.path == "swap"
        assert out.log.animation is not None and out.log.animation.detected is False
        frame = out.files["frame-0.png"]
        assert not colour_mask(frame, (255, 0, 0), tol=30).any()
        assert colour_mask(frame, (0, 0, 255), tol=5).sum() == 100 * 100


@pytest.mark.browser
@pytest.mark.corpus
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed")
def test_swap_and_navigation_give_identical_pixels() -> None:
    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    files = sorted((corpus_dir("llm_svgs") / "nuance_rival" / "svg-layout").glob("*.svg"))[:12]
    assert files
    wire = task().to_wire()
    shas: dict[bool, list[tuple[str, str]]] = {}
    for swap in (True, False):
        handler = create_handler(
            {"chromium_no_sandbox": True, "self_test": False, "swap_documents": swap}
        )
        try:
            shas[swap] = []
            for path in files:
                job = {"kind": "render", "svg": path.read_text("utf-8", "replace"), "task": wire}
                result, _ = handler.handle({**job, "masks": False})
                shas[swap].append((result["document"]["path"], result["frames"][0]["sha256"]))
        finally:
            handler.close()
    assert {p for p, _ in shas[True]} == {"swap"} and {p for p, _ in shas[False]} == {"navigate"}
    assert [s for _, s in shas[True]] == [s for _, s in shas[False]]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed")
def test_a_navigated_drawing_leaves_the_shell_and_the_next_job_alone() -> None:
    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    # a fetch vector (navigated to), painting red, still asking for its image when it is left
    navigated = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <rect width="800" height="600" fill="#ff0000"/>
      <image href="https://leak.example/x.png" width="10" height="10"/></svg>"""
    plain = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <rect x="100" y="100" width="100" height="100" fill="#0000ff"/></svg>"""
    wire = task().to_wire()
    handler = create_handler({"chromium_no_sandbox": True, "self_test": False})
    try:
        first, files = handler.handle({"kind": "render", "svg": plain, "task": wire})
        alone = files["frame-0.png"]
        loaded = first["worker"]["navigations"]
        for round_ in range(1, 4):
            nav, _ = handler.handle({"kind": "render", "svg": navigated, "task": wire})
            assert nav["document"]["path"] == "navigate"
            assert [b["url"] for b in nav["blocked_requests"]] == ["https://leak.example/x.png"]
            out, files = handler.handle({"kind": "render", "svg": plain, "task": wire})
            assert out["document"]["path"] == "swap" and out["blocked_requests"] == []
            assert files["frame-0.png"] == alone
            # one navigation per navigated drawing: the shell is never loaded again over it
            assert out["worker"]["navigations"] == loaded + round_
    finally:
        handler.close()


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed")
def test_the_xml_viewers_late_script_is_never_counted_for_the_next_drawing() -> None:
    if os.geteuid() != 0:
        pytest.skip("in-process Chromium without its sandbox is only run as root in CI")
    from render.worker import create_handler

    # XML outside the SVG namespace: Chromium shows its tree viewer, whose built-in script runs
    # after the job has read the page's script time; every document shares one renderer
    viewer = '<?xml version="1.0"?><note><to>regua</to><body>not a drawing</body></note>'
    navigated = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
      <image href="https://leak.example/x.png" width="10" height="10"/></svg>"""
    wire = task().to_wire()
    handler = create_handler({"chromium_no_sandbox": True, "self_test": False})
    try:
        for _ in range(3):
            shown, _ = handler.handle({"kind": "render", "svg": viewer, "task": wire})
            assert shown["document"]["xml_viewer"] is True
            assert shown["script_executed"] is False  # the viewer's own script is not the page's
            out, _ = handler.handle({"kind": "render", "svg": navigated, "task": wire})
            assert out["document"]["path"] == "navigate" and out["status"] == "ok"
            assert out["script_executed"] is False
    finally:
        handler.close()
