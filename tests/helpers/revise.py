"""A small task decided by the static rules alone, and a drawing broken the way a picture shows.

``revise-mini@1`` is the static pelican task with criterion F1 only (its family has no panel of
its own, so the static rules decide: pass or fail, no judge to calibrate). :data:`BROKEN` draws
in a 400x300 viewBox where the task requires 800x600: it renders (frames to look at) and fails
F1 by the viewbox check; :data:`FIXED` is the same drawing at the required size and passes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select

from regua.settings import Settings
from sandbox import WorkerPool
from service.context import ServiceContext
from service.storage import Run
from tasks import TaskSpec, bundled_registry

TASK = "revise-mini@1"
SHAPES = (
    "<rect x='0' y='0' width='{w}' height='{h}' fill='#cde'/>"
    "<circle cx='{cx}' cy='{cy}' r='{r}' fill='#fff' stroke='#333' stroke-width='4'/>"
)


def _svg(w: int, h: int) -> str:
    body = SHAPES.format(w=w, h=h, cx=w // 2, cy=h // 2, r=h // 4)
    return f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {w} {h}'>{body}</svg>"


BROKEN = f"Here is my drawing:\n```svg\n{_svg(400, 300)}\n```\n"
FIXED = f"Revised, at the size the task asks for:\n```svg\n{_svg(800, 600)}\n```\n"


def revise_task() -> TaskSpec:
    """``revise-mini@1`` (F1 only, family ``revise-mini``)."""
    base = bundled_registry().get("pelican-bicycle-static@1").model_dump(mode="json")
    doc: dict[str, Any] = {**base, "id": "revise-mini", "family": "revise-mini"}
    doc["criteria"] = [c for c in base["criteria"] if c["id"] == "F1"]
    return TaskSpec.model_validate(doc)


def revise_task_yaml() -> str:
    """The task as a task file (for ``REGUA_TASKS_DIR``)."""
    return yaml.safe_dump(revise_task().to_wire(), sort_keys=False)


@contextmanager
def revise_context(data_dir: Path, render_pool: WorkerPool) -> Iterator[ServiceContext]:
    """SQLite in ``data_dir``, the session's render pool, the executor running, the task added."""
    settings = Settings(data_dir=data_dir, render_workers=2, generation_backoff_s=0.01)
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    ctx.registry.register(revise_task())
    ctx.start_executor(threads=2)
    try:
        yield ctx
    finally:
        ctx.close()


def wait_done(ctx: ServiceContext, ids: Sequence[str], timeout_s: float = 300) -> dict[str, str]:
    """Wait until every run is done; run id → outcome (the deadline only bounds a hang)."""
    deadline = time.monotonic() + timeout_s
    rows: list[Any] = []
    while time.monotonic() < deadline:
        with ctx.db.read() as s:
            rows = list(s.execute(select(Run.id, Run.status, Run.outcome).where(Run.id.in_(ids))))
        if len(rows) == len(set(ids)) and all(status == "done" for _, status, _ in rows):
            return {str(i): str(o) for i, _, o in rows}
        time.sleep(0.2)
    raise AssertionError(f"runs not done after {timeout_s} s: {rows}")
