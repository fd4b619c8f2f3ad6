"""Fixtures of the scoring tests: a stored world of real runs plus cheap clones.

``rescore_world`` (module scope) renders five drawings through the real pipeline (sandboxed
Chromium on the shared ``render_pool``): the structured pelican and four copies with the left foot
lifted off its pedal by 1.5 %, 2 %, 4 % and 6 % of the wheel diameter. geometry@1 passes the first
three on R2 and calls the last two uncertain; the strict profile (pass <= 1 %, uncertain <= 3 %)
moves exactly the four perturbed drawings. The runs are then cloned to 2,000 in the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from regua.settings import Settings
from service.context import ServiceContext
from tests.helpers.render_pool import render_pool_unavailable
from tests.helpers.runs import (
    STRICT_PROFILE,
    TASK,
    CountingRenderer,
    clone_run,
    grant,
    machinery,
    real_runs,
    register_strict,
)

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "outputs" / "structured-good.svg"
FRACTIONS = {"lift-1.5": 0.015, "lift-2": 0.02, "lift-4": 0.04, "lift-6": 0.06}
TOTAL = 2000
PER_PERTURBED = 10


@dataclass
class World:
    """The stored runs: the originals by drawing name, and every run id per drawing."""

    ctx: ServiceContext
    renderer: CountingRenderer
    originals: dict[str, str]
    by_drawing: dict[str, list[str]] = field(default_factory=dict)
    fresh_seconds: float = 0.0

    def all_runs(self) -> list[str]:
        """Every stored run id."""
        return [r for ids in self.by_drawing.values() for r in ids]


def drawings() -> dict[str, str]:
    """The good sample and its foot-off-pedal variants (SVG text)."""
    from judges.perturbation import perturb
    from tasks import bundled_registry

    task = bundled_registry().get(TASK)
    svg = SAMPLE.read_bytes()
    out = {"good": svg.decode()}
    for name, fraction in FRACTIONS.items():
        v = perturb(svg, "foot-off-pedal", task=task, params={"fraction": fraction}, seed=0)
        out[name] = v.svg.decode()
    return out


@pytest.fixture(scope="module")
def rescore_world(render_pool: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Five real runs (geometry@1 and the strict profile granted a vote), cloned to 2,000."""
    import time

    why = render_pool_unavailable()
    if why:
        pytest.skip(why)
    register_strict()
    data = tmp_path_factory.mktemp("rescore") / "data"
    settings = Settings(data_dir=data, database_url=None, queue_capacity=100)
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    grant(ctx.db, ("geometry@1", STRICT_PROFILE))
    renderer = CountingRenderer(settings, render_pool)
    started = time.perf_counter()
    originals = real_runs(ctx, machinery(ctx, renderer), drawings())
    world = World(ctx, renderer, originals, fresh_seconds=time.perf_counter() - started)
    clones = {name: PER_PERTURBED for name in FRACTIONS}
    clones["good"] = TOTAL - len(originals) - PER_PERTURBED * len(FRACTIONS)
    for name, run_id in originals.items():
        world.by_drawing[name] = [run_id, *clone_run(ctx.db, run_id, clones[name])]
    yield world
    ctx.close()
