"""A drawing cannot make its own run ``incomplete``; the machinery's failures stay so; and the
verdict does not depend on how busy the machine is.

The render budget is CPU time of the sandbox's process tree. A filter-heavy drawing that passes
the static checks is stopped at its budget and comes back ``over_budget`` ("exceeds the render
budget: ..."), which fails it by that declared rule; a drawing near its budget gets the same
outcome alone and beside four CPU-hog processes (wall time grows, CPU time does not). A Chromium
browser process killed mid-job is the machinery's failure: the job is retried on a fresh worker
like a killed worker, and nothing the submitter sees carries Chromium's command line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
BUDGET_S = 2.0
LOOSE = 40.0
"""Wall-clock factor for these tests: the safety stop must never be what decides here."""


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


def test_filter_heavy_drawing_that_passes_the_checks_costs_at_most_its_cpu_budget(
    render_pool: WorkerPool, samples_dir: Path
) -> None:
    svg = slow_filter()
    assert run_checks(svg, task()).status == "pass"  # the static estimate lets it through
    out = render(render_pool, svg, task(), masks=False, cpu_budget_s=BUDGET_S, wall_factor=LOOSE)
    assert (out.status, out.log.status) == ("over_budget", "over_budget")
    assert out.cause == "cpu_budget" and out.attempts == 1 and out.log.stopped_by == "cpu"
    assert out.cpu_ms is not None and BUDGET_S * 1000 <= out.cpu_ms < BUDGET_S * 1500 + 1000
    assert out.log.cpu_budget_s == BUDGET_S and out.log.wall_stop_s == BUDGET_S * LOOSE
    assert out.detail.startswith("exceeds the render budget: the render used")
    assert out.log.frames == [] and out.files == {}
    good = (samples_dir / "outputs" / "structured-good.svg").read_text()
    assert render(render_pool, good).status == "ok"  # the worker serves the next job


@contextmanager
def cpu_hogs(count: int = 4) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes spinning on the CPU for as long as the block runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)  # let them take their share
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_same_outcome_alone_and_beside_four_cpu_hogs(render_pool: WorkerPool) -> None:
    """One drawing near its budget passes it alone and beside 4 CPU hogs; one far over it fails
    by the rule in both cases. The budget is set from the near drawing's own cost (it uses half
    of it), so the test holds on a fast and on a slow machine."""
    near, far = slow_filter(layers=1, radius=60), slow_filter(layers=4, radius=100)
    costs = [
        render(render_pool, near, task(), masks=False, cpu_budget_s=60.0, wall_factor=LOOSE)
        for _ in range(2)
    ]
    assert all(c.status == "ok" and c.cpu_ms is not None for c in costs)
    budget = max(c.cpu_ms or 0.0 for c in costs) / 1000 * 2

    def both() -> tuple[RenderOutput, RenderOutput]:
        kw = {"masks": False, "cpu_budget_s": budget, "wall_factor": LOOSE}
        return render(render_pool, near, task(), **kw), render(render_pool, far, task(), **kw)

    alone = both()
    with cpu_hogs(4):
        loaded = both()
    for near_out, far_out in (alone, loaded):
        assert near_out.status == "ok" and near_out.log.stopped_by is None, near_out.detail
        assert near_out.cpu_ms is not None and near_out.cpu_ms < budget * 1000
        assert (far_out.status, far_out.cause) == ("over_budget", "cpu_budget"), far_out.detail
        assert far_out.detail.startswith("exceeds the render budget")
    assert alone[0].log.frames[0].sha256 == loaded[0].log.frames[0].sha256  # the same pixels
    print(
        f"\nbudget {budget:.2f} s CPU; near: alone {alone[0].cpu_ms:.0f} ms CPU / "
        f"{alone[0].log.wall_ms:.0f} ms wall, with 4 hogs {loaded[0].cpu_ms:.0f} ms CPU / "
        f"{loaded[0].log.wall_ms:.0f} ms wall; load {os.getloadavg()[0]:.1f}"
    )


def test_a_wall_stop_with_cpu_to_spare_is_retried_quietly_then_incomplete(
    render_pool: WorkerPool,
) -> None:
    """Stopped by the wall clock (a 0.2 s safety stop) while its CPU time was under the budget,
    a render is the machine's trouble: retried once on a fresh worker at lower concurrency, then
    ``incomplete`` with cause ``wall_stop`` (what the submitter reads says so), never a fail."""
    # 91 timestamps, each a different state of the moving circle (a still drawing is captured
    # once and reused), so the work lasts seconds: well past the 0.2 s stop and the watchdog's
    # once-a-second reading, on a quiet machine too
    spec = animated_task(times_hz=30.0, observe_s=3.0)
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600"><circle r="40">'
        '<animate attributeName="cx" from="0" to="800" dur="4s" repeatCount="indefinite"/>'
        "</circle></svg>"
    )
    fresh_before = render_pool.stats["retired_fresh"]
    out = render(render_pool, svg, spec, masks=False, cpu_budget_s=60.0, timeout_s=0.2)
    assert (out.status, out.cause, out.attempts) == ("incomplete", "wall_stop", 2)
    assert out.log.stopped_by == "wall" and out.files == {}
    assert [a["stopped_by"] for a in out.log.attempts] == ["wall"]
    assert "not a verdict on the drawing" in out.detail
    assert render_pool.stats["retired_fresh"] == fresh_before + 1  # the retry took a new worker


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
    spec = animated_task(times_hz=20.0, observe_s=3.0)  # 61 distinct frames: seconds of work
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600"><circle r="40">'
        '<animate attributeName="cx" from="0" to="800" dur="3s"/></circle></svg>'
    )
    assert render(pool, svg, task(), masks=False).status == "ok"  # warm: the job starts at once
    result: list[RenderOutput] = []
    job = threading.Thread(target=lambda: result.append(render(pool, svg, spec, masks=False)))
    job.start()
    time.sleep(0.7)
    os.kill(browsers.pop(), signal.SIGKILL)  # the browser dies mid-job
    job.join(timeout=120)
    (out,) = result
    assert out.status == "ok", out.detail  # the retry on a fresh worker rendered it
    assert out.attempts == 2 and len(out.log.frames) == 61
    assert pool.stats["incomplete_crash"] == 1 and pool.stats["retired_crash"] == 1, pool.stats
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


def test_a_job_after_a_budget_stop_never_inherits_its_killed_renderer(
    render_pool: WorkerPool, samples_dir: Path
) -> None:
    """The watchdog may kill the renderers just as a job's capture returns; the job is over its
    budget all the same, and the next job on that worker opens a fresh page: it is rendered,
    never a "crash" of a renderer killed for the job before it."""
    good = (samples_dir / "outputs" / "structured-good.svg").read_text()
    for _ in range(4):
        hasty = render(render_pool, good, cpu_budget_s=0.01)
        assert (hasty.status, hasty.cause) == ("over_budget", "cpu_budget"), hasty.detail
        after = render(render_pool, good)
        assert after.status == "ok", after.detail
