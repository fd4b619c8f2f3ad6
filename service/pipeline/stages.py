"""The stages of the first evaluation of a run, in order: check → render → evaluate → finalize.

:data:`STAGES` is the data-driven list the executor walks; each stage is small enough to test
alone, and re-scoring reuses the render stage when a render profile changed.
"""

from __future__ import annotations

from service.pipeline.check_stage import check_compute, check_version
from service.pipeline.evaluate_stage import evaluate_compute, evaluate_version, finalize_compute
from service.pipeline.render_stage import render_compute, render_version
from service.pipeline.runner import Stage

RENDER_STAGE = Stage("render", render_version, render_compute)

STAGES: list[Stage] = [
    Stage("check", check_version, check_compute),
    RENDER_STAGE,
    Stage("evaluate", evaluate_version, evaluate_compute),
    Stage("finalize", lambda _ctx: "1", finalize_compute),
]
