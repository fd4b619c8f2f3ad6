"""A drawing cannot make its own run ``incomplete``; the machinery's failures stay so (issue 14,
items 7 and 8).

A filter-heavy drawing that passes the static checks costs at most the job's time limit and comes
back ``over_budget`` ("exceeds the render budget: ..."), which fails it by that declared rule. A
Chromium browser process killed mid-job is the machinery's failure: the job is retried on a fresh
worker like a killed worker, and nothing the submitter sees carries Chromium's command line.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks import run_checks
from render.failures import public_detail
from sandbox import WorkerPool
from sandbox.hostproc import tree_pids
from service.pipeline.render_client import RenderOutput, create_pool
from tests.helpers.render_pool import render_settings
from tests.render.conftest import animated_task, render, task

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]
BUDGET_S = 4.0


def slow_filter(layers: int = 10, radius: int = 200) -> str:
    """One full-viewport rectangle through a chain of wide morphology and blur passes."""
    prims = "".join(
        f'<feMorphology radius="{radius}" operator="{"dilate" if i % 2 else "erode"}"/>'
        '<feGaussianBlur stdDeviation="50"/>'
        for i in range(layers)
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600">'
        f'<filter id="f" x="0" y="0" width="1" height="1">{prims}</filter>'
        '<rect width="800" height="600" fill="#3366cc" filter="url(#f)"/></svg>'
    )


def test_filter_heavy_drawing_that_passes_the_checks_costs_at_most_the_budget(
    render_pool: WorkerPool, samples_dir: Path
) -> None:
    svg = slow_filter()
    assert run_checks(svg, task()).status == "pass"  # the static estimate lets it through
    started = time.monotonic()
    out = render(render_pool, svg, task(), masks=False, timeout_s=BUDGET_S)
    elapsed = time.monotonic() - started
    assert elapsed < BUDGET_S + 2.0, elapsed  # at most the budget, never retried
    assert (out.status, out.log.status) == ("over_budget", "over_budget")
    assert out.cause in {"render_timeout", "timeout"} and out.attempts == 1
    assert out.detail.startswith("exceeds the render budget: the render ran past")
    assert out.log.frames == [] and out.files == {}
    good = (samples_dir / "outputs" / "structured-good.svg").read_text()
    assert render(render_pool, good).status == "ok"  # the worker serves the next job


def _browsers(root: int) -> set[int]:
    """Host pids of the Chromium browser processes (not renderers, GPU ...) below ``root``."""
    found = set()
    for pid in tree_pids(root):
        try:  # Chromium's helpers rewrite their command line as one string: compare as text
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if cmdline.split(b" ", 1)[0].endswith(b"/chromium") and b"--type=" not in cmdline:
            found.add(pid)
    return found


@pytest.fixture
def own_pool() -> Iterator[tuple[WorkerPool, set[int]]]:
    """A one-worker pool of its own, and the host pid of that worker's browser process."""
    pool = create_pool(render_settings(), size=1, self_test=False)
    try:
        (sandbox_pid,) = pool.idle_sandbox_pids()
        yield pool, _browsers(sandbox_pid)
    finally:
        pool.close()


def test_a_killed_browser_is_retried_like_a_killed_worker(
    own_pool: tuple[WorkerPool, set[int]],
) -> None:
    pool, browsers = own_pool
    assert len(browsers) == 1, browsers
    spec = animated_task(times_hz=20.0, observe_s=3.0)  # 61 frames: a few seconds of work
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600"><circle r="40"/></svg>'
    result: list[RenderOutput] = []
    job = threading.Thread(target=lambda: result.append(render(pool, svg, spec, masks=False)))
    job.start()
    time.sleep(0.7)
    os.kill(browsers.pop(), signal.SIGKILL)  # the browser dies mid-job
    job.join(timeout=120)
    (out,) = result
    assert out.status == "ok", out.detail  # the retry on a fresh worker rendered it
    assert out.attempts == 2 and len(out.log.frames) == 61
    assert pool.stats["incomplete_crash"] == 1 and pool.stats["retired_crash"] == 1
    shown = str(out.log.model_dump())  # what a submitter can read of the render
    assert "--disable" not in shown and "<launching>" not in shown


def test_public_detail_drops_chromium_command_line_and_logs() -> None:
    text = (
        "Page.evaluate: Target page, context or browser has been closed\nBrowser logs:\n\n"
        "<launching> /usr/bin/chromium --disable-gpu --user-data-dir=/tmp/x\n<launched> pid=7"
    )
    assert public_detail(text) == "Page.evaluate: Target page, context or browser has been closed"
    flags = "launch failed: /usr/lib/chromium/chromium --headless --no-sandbox about:blank"
    assert "--" not in public_detail(flags) and "chromium" not in public_detail(flags)
