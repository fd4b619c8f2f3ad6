"""Resource bombs end within the time limit (over the render budget, a declared rule); the pool
recovers."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import WorkerPool
from tests.conftest import corpus_dir
from tests.render.conftest import render, task

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
LIMIT_S = 12.0
ACCEPTED = {"render_timeout", "render_crash", "timeout", "oom"}


def blur_bomb() -> str:
    layers = "".join(
        f'<rect x="{i}" y="{i}" width="800" height="600" fill="#{i:02x}80c0" filter="url(#b)"/>'
        for i in range(200)
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600">'
        '<filter id="b" x="-50%" y="-50%" width="200%" height="200%">'
        '<feGaussianBlur stdDeviation="900"/><feMorphology radius="300"/></filter>'
        f"{layers}</svg>"
    )


def many_elements(count: int = 100_000) -> str:
    rects = "".join(
        f'<rect x="{i % 800}" y="{(i // 800) % 600}" width="2" height="2"/>' for i in range(count)
    )
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">{rects}</svg>'


def use_chain(levels: int = 25, fan: int = 10) -> str:
    defs = ['<g id="l0"><rect width="1" height="1"/></g>']
    for level in range(1, levels):
        uses = "".join(f'<use href="#l{level - 1}" x="{k}"/>' for k in range(fan))
        defs.append(f'<g id="l{level}">{uses}</g>')
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600"><defs>'
        + "".join(defs)
        + f'</defs><use href="#l{levels - 1}"/></svg>'
    )


ENDLESS_SMIL = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">
 <rect width="100" height="100" fill="#00f">
  <animate attributeName="x" values="0;700;0" dur="0.001s" repeatCount="indefinite"/>
  <animate attributeName="fill" values="red;blue" dur="0.001s" repeatCount="indefinite"/>
 </rect></svg>"""


def _baseline(pool: object, samples_dir: Path) -> tuple[str, str]:
    svg = (samples_dir / "outputs" / "structured-good.svg").read_text()
    out = render(pool, svg)
    assert out.status == "ok"
    return svg, out.log.frames[0].sha256


@pytest.mark.parametrize(
    "name", ["blur", "elements-1e5", "use-chain", "endless-smil-static", "corpus-useDosTestTwo"]
)
def test_bomb_is_bounded_and_pool_recovers(
    render_pool: WorkerPool, samples_dir: Path, name: str
) -> None:
    if name == "corpus-useDosTestTwo":
        svg = (corpus_dir("malicious") / "svg_sanitizer/tests/data/useDosTestTwo.svg").read_text()
    else:
        makers: dict[str, Callable[[], str]] = {
            "blur": blur_bomb,
            "elements-1e5": many_elements,
            "use-chain": use_chain,
            "endless-smil-static": lambda: ENDLESS_SMIL,
        }
        svg = makers[name]()
    good, good_sha = _baseline(render_pool, samples_dir)
    started = time.monotonic()
    out = render(render_pool, svg, task(), masks=False, timeout_s=LIMIT_S)
    elapsed = time.monotonic() - started
    assert elapsed < LIMIT_S * (1 + render_pool.retries) + 15, elapsed
    if out.status != "ok":  # a bomb's cost is the drawing's: over the render budget
        assert out.cause in ACCEPTED, (out.cause, out.detail)
        assert out.status == out.log.status == "over_budget"
        assert out.detail.startswith("exceeds the render budget: ")
    else:
        assert out.log.script_executed is False
    if name == "endless-smil-static":
        assert out.status == "ok" and out.log.animation is not None
        assert out.log.animation.kinds == ["smil"]
    after = [render(render_pool, good) for _ in range(render_pool.size)]
    assert all(a.status == "ok" for a in after)
    assert {a.log.frames[0].sha256 for a in after} == {good_sha}
    print(f"\n{name}: {out.status} ({out.cause}) in {elapsed:.1f} s")
