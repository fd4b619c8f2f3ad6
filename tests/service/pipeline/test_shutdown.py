"""SIGTERM during a render (issue 14, item 15): the server stops within a few seconds and the
run in progress goes back to the queue, where a new server finishes it.

Before: stopping waited up to 30 s per executor thread for the render in flight, then exited
with the run still ``running`` under a lease of a process that no longer existed.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from checks import run_checks
from sandbox.cputime import Ticks, TreeCpuMeter, descendant_ticks
from service.pipeline.jobs import INTERRUPTED, Job, JobFields, JobRunner
from service.storage import Database, Run, StageAttempt, StageRecord
from tasks import TaskSpec, bundled_registry
from tests.helpers.server import REPO, Served, require_real_rendering

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


TASK = "shutdown-static@1"
RENDERING_CPU_S = 1.0
"""CPU seconds the first server's sandbox spends on the slow drawing before the SIGTERM: the
render is under way (its worker was idle before the drawing was submitted)."""
RENDER_CPU_S = 8.0
"""The render budget of :data:`TASK`. The slow drawing needs more, so the first server's render
is still busy when it is stopped (by then it has used :data:`RENDERING_CPU_S`, and the stop's
graces, 2 s for open requests and 3 s for work in progress, add at most 5 CPU s: the drawing
keeps one renderer thread busy), and the second server's render ends at this budget: less CPU
than the default 20 s (or the 12 s before) for the same proof that the run was resumed from the
render."""
GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()
STOP_WITHIN_S = 8.0
"""A few seconds: the grace of open requests (2 s) and of work in progress (3 s), plus exit."""


def slow_drawing(passes: int = 30, radius: int = 200) -> str:
    """A drawing that passes every check (render-cost included) yet keeps Chromium busy.

    One full-viewport rectangle through a chain of wide morphology and blur passes: few
    primitives over one viewport, so the static filter-cost estimate lets it through, while each
    wide morphology pass costs the renderer seconds.
    """
    prims = "".join(
        f'<feMorphology radius="{radius}" operator="{"dilate" if i % 2 else "erode"}"/>'
        '<feGaussianBlur stdDeviation="50"/>'
        for i in range(passes)
    )
    heavy = (
        f'<defs><filter id="heavy" x="0" y="0" width="1" height="1">{prims}</filter></defs>'
        '<rect width="800" height="600" fill="#3366cc" opacity="0.05" filter="url(#heavy)"/>'
    )
    return GOOD.replace("</svg>", heavy + "</svg>")


def shutdown_task() -> TaskSpec:
    """``shutdown-static@1``: the static pelican task with a render budget of
    :data:`RENDER_CPU_S` CPU seconds."""
    base = bundled_registry().get("pelican-bicycle-static@1").to_wire()
    output = {**base["output"], "max_render_cpu_s": RENDER_CPU_S}
    return TaskSpec.model_validate({**base, "id": "shutdown-static", "output": output})


def tasks_dir(root: Path) -> Path:
    """A task folder (``REGUA_TASKS_DIR``) holding :func:`shutdown_task`."""
    folder = root / "tasks"
    folder.mkdir()
    spec = shutdown_task()
    assert spec.ref == TASK
    (folder / "shutdown.yaml").write_text(yaml.safe_dump(spec.to_wire(), sort_keys=False))
    return folder


def sandbox_meter(server_pid: int) -> TreeCpuMeter:
    """CPU seconds spent from now on by the processes ``server_pid`` started (its render
    worker's sandbox: bubblewrap, the worker, the driver, Chromium), the server not counted."""

    def ticks() -> Ticks:
        return {k: v for k, v in descendant_ticks(server_pid).items() if k[0] != server_pid}

    return TreeCpuMeter(ticks)


def _state(db: Database, run_id: str) -> tuple[str, str | None, int, set[str]]:
    with db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        stages = set(s.scalars(select(StageRecord.stage).where(StageRecord.run_id == run_id)))
        return run.status, run.lease_owner, run.claims, stages


def _submit_until_rendering(server: Served, db: Database, slow: str) -> tuple[str, float]:
    """Submit ``slow`` and wait until its render has used :data:`RENDERING_CPU_S`; the run's id
    and the CPU seconds its render used by then.

    A quick run goes first: the render worker starts for it and is idle afterwards, so every CPU
    second its sandbox spends from then on is the slow drawing's render.
    """
    client = server.client()
    warm = client.submit(TASK, "warm-model", GOOD)
    assert client.wait([warm], timeout_s=180)[warm]["status"] == "done"
    sandbox = sandbox_meter(server.proc.pid)
    run_id = client.submit(TASK, "slow-model", slow)
    client.close()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # checked, rendering for RENDERING_CPU_S
        status, owner, _claims, stages = _state(db, run_id)
        rendered_s = sandbox.sample()
        if status == "running" and stages == {"check"} and rendered_s >= RENDERING_CPU_S:
            break
        time.sleep(0.1)
    assert (status, stages) == ("running", {"check"}) and owner, "never caught mid-render"
    assert rendered_s >= RENDERING_CPU_S, f"the render used {rendered_s:.1f} CPU s"
    return run_id, rendered_s


@pytest.mark.browser
@pytest.mark.sandbox
def test_sigterm_mid_render_exits_quickly_and_hands_the_run_back(tmp_path: Path) -> None:
    """SIGTERM while the sandbox is rendering (it has spent :data:`RENDERING_CPU_S` on the
    drawing, a measure that does not depend on how busy the machine is): the server exits in
    seconds, the run is queued again with nothing of the render stored and no failed attempt,
    and a new server resumes it from the render to its end."""
    require_real_rendering()
    data, tasks = tmp_path / "data", tasks_dir(tmp_path)
    data.mkdir()
    db = Database(f"sqlite:///{data / 'regua.sqlite3'}")
    slow = slow_drawing()
    assert run_checks(slow, shutdown_task()).status == "pass", "must be rendered"
    first = Served(data, REGUA_TASKS_DIR=str(tasks))
    try:
        run_id, rendered_s = _submit_until_rendering(first, db, slow)
        t0 = time.monotonic()
        first.proc.send_signal(signal.SIGTERM)
        first.proc.wait(30)
        took = time.monotonic() - t0
    finally:
        first.stop()
    print(f"\nSIGTERM after {rendered_s:.1f} CPU s of rendering: exited in {took:.1f} s")
    assert took < STOP_WITHIN_S, f"stopping took {took:.1f} s"
    status, owner, claims, stages = _state(db, run_id)
    # handed back: queued, no lease, its claim given back, and nothing half-written
    assert (status, owner, claims, stages) == ("queued", None, 0, {"check"})
    with db.read() as s:
        attempts = s.scalar(select(func.count()).select_from(StageAttempt))
    assert attempts == 0, "the interrupted render was counted as a failed attempt"
    assert "handed 1 unfinished run(s) back to the queue" in first.output()

    # a new server resumes it from the render (a short render timeout, so it finishes soon; the
    # render ends at the task's budget of RENDER_CPU_S CPU seconds)
    second = Served(data, REGUA_JOB_TIMEOUT_S="3", REGUA_TASKS_DIR=str(tasks))
    try:
        client = second.client()
        view = client.wait([run_id], timeout_s=180)[run_id]
        client.close()
    finally:
        second.stop()
    assert view["status"] == "done" and view["outcome"]["status"] in {
        "pass",
        "fail",
        "pending",
        "incomplete",
    }
    status, owner, claims, stages = _state(db, run_id)
    assert (status, owner, claims) == ("done", None, 1)
    assert stages == {"check", "render", "evaluate", "finalize"}
    db.dispose()


def test_closing_the_job_runner_does_not_wait_for_a_long_job() -> None:
    """A background job still running after the grace is recorded as interrupted."""
    runner = JobRunner()
    release = threading.Event()
    started = threading.Event()
    told: list[Job] = []

    def long_job() -> JobFields:
        started.set()
        release.wait(60)
        return {"answer": 1}

    job = runner.submit("test", long_job, on_cancel=told.append)
    assert started.wait(10)
    t0 = time.monotonic()
    runner.close(wait_s=0.5)
    took = time.monotonic() - t0
    assert took < 2.0, f"closing waited {took:.1f} s for the job"
    assert (job.state, job.error) == ("failed", INTERRUPTED) and told == [job]
    release.set()  # the job ends later: it does not overwrite the recorded interruption
    time.sleep(0.2)
    assert (job.state, job.error, job.result) == ("failed", INTERRUPTED, None)
