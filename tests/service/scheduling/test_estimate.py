"""The check stage's render-cost estimate and the lane it gives a run (no rendering here).

What a user sees: ``runs.lane`` and ``runs.render_cost`` after the check; an animated drawing on
the animated task is heavy, the same drawing where only one frame is taken (static task) or a
still drawing on the animated task is cheap, a small file full of filters is heavy, and a reply
that is not rendered costs nothing.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from regua.settings import Settings
from service.context import ServiceContext
from service.pipeline.lanes import CHEAP, HEAVY, declares_animation, estimate, lane_of
from service.pipeline.runner import advance
from service.pipeline.stages import STAGES
from service.storage import Run
from tasks import bundled_registry
from tests.helpers.runs import TASK
from tests.service.scheduling.helpers import ANIMATED, ANIMATED_TASK, STATIC, animated, static

REGISTRY = bundled_registry()


def _filters(n: int) -> str:
    blur = '<feGaussianBlur stdDeviation="9"/>'
    prims = "".join(f'<filter id="f{i}">{blur}</filter>' for i in range(n))
    rects = "".join(f'<rect width="800" height="600" filter="url(#f{i})"/>' for i in range(n))
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600">{prims}{rects}</svg>'


def test_animation_on_the_animated_task_is_heavy_and_counts_every_timestamp() -> None:
    task = REGISTRY.get(ANIMATED_TASK)
    cost = estimate(task, ANIMATED)
    assert cost.frames == len(task.timestamps()) > 1
    assert cost.captures_per_frame == 3  # the frame and the two mask passes
    assert cost.lane == HEAVY and cost.units >= cost.frames * 3
    assert "heavy lane" in cost.describe()


def test_one_frame_is_cheap_whatever_the_drawing() -> None:
    static_task, animated_task = REGISTRY.get(TASK), REGISTRY.get(ANIMATED_TASK)
    assert estimate(static_task, STATIC).lane == CHEAP
    assert estimate(static_task, ANIMATED).frames == 1  # a static task takes one frame
    still = estimate(animated_task, STATIC)  # declares no animation: one state to capture
    assert (still.frames, still.lane) == (1, CHEAP)
    assert not declares_animation(STATIC) and declares_animation(ANIMATED)


def test_filters_make_a_small_static_file_heavy_and_nothing_to_render_is_free() -> None:
    task = REGISTRY.get(TASK)
    assert estimate(task, _filters(2)).lane == CHEAP
    bomb = estimate(task, _filters(60))
    assert (bomb.effects, bomb.lane) == (60, HEAVY)  # one primitive per filter
    assert estimate(task, None).units == 0.0
    assert estimate(task, _filters(60), will_render=False).lane == CHEAP
    assert lane_of(19.9) == CHEAP and lane_of(20.0) == HEAVY


def test_the_check_stage_records_each_runs_lane(tmp_path: Path, database_url: str) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url, queue="embedded")
    ctx = ServiceContext.open(settings)
    try:
        ids = ctx.submit([*animated(1), *static(1), *static(1, "x")], None)
        with ctx.db.read() as s:
            assert set(s.scalars(select(Run.lane))) == {None}  # unchecked: waits as cheap
        for run_id in ids:
            assert advance(ctx.db, ctx.blobs, ctx.machinery, run_id, STAGES[:1])
        with ctx.db.read() as s:
            rows = {r.id: (r.lane, r.render_cost) for r in s.scalars(select(Run))}
        assert rows[ids[0]][0] == HEAVY and (rows[ids[0]][1] or 0) >= 20
        assert rows[ids[1]] == (CHEAP, 3.0) == rows[ids[2]]
    finally:
        ctx.close()
