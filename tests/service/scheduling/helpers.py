"""Shared pieces of the scheduling tests: the two kinds of work, submitting them, waiting on them.

Animated runs are the bundled pedalling sample on the animated task (every timestamp, its masks:
the heavy lane); static runs are the structured sample on the structured task (one frame: the
cheap lane). Every run's text differs by a comment, so no two are the same submission.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import func, select

from service.context import ServiceContext
from service.pipeline.submit import Submission
from service.storage import Run, StageRecord
from tests.helpers.runs import TASK
from tests.helpers.server import REPO

ANIMATED_TASK = "pelican-bicycle-animated@1"
ANIMATED = (REPO / "samples/outputs/animated-pedalling.svg").read_text()
STATIC = (REPO / "samples/outputs/structured-good.svg").read_text()
HANG_S = 900.0
"""Only bounds a hang: every wait below is for a state, never a duration."""


def _variant(svg: str, tag: str) -> str:
    return svg.replace("</svg>", f"<!-- {tag} --></svg>")


def animated(n: int, tag: str = "a") -> list[Submission]:
    """``n`` animated submissions (the heavy lane)."""
    return [Submission(ANIMATED_TASK, "m", _variant(ANIMATED, f"{tag}{i}")) for i in range(n)]


def static(n: int, tag: str = "s") -> list[Submission]:
    """``n`` static submissions (the cheap lane)."""
    return [Submission(TASK, "m", _variant(STATIC, f"{tag}{i}")) for i in range(n)]


def done(ctx: ServiceContext, ids: Sequence[str]) -> int:
    """How many of ``ids`` are finished."""
    with ctx.db.read() as s:
        query = select(func.count(Run.id)).where(Run.id.in_(ids), Run.status == "done")
        return int(s.scalar(query) or 0)


def last_finished(ctx: ServiceContext, ids: Sequence[str]) -> datetime:
    """When the last of ``ids`` (all finished) finished: the moment a state is read at."""
    with ctx.db.read() as s:
        moment = s.scalar(select(func.max(Run.finished_at)).where(Run.id.in_(ids)))
    assert moment is not None, "none of the runs has finished"
    return moment


def done_by(ctx: ServiceContext, ids: Sequence[str], moment: datetime) -> int:
    """How many of ``ids`` had finished at ``moment`` (stored times: not how soon a poll saw it)."""
    with ctx.db.read() as s:
        query = select(func.count(Run.id)).where(Run.id.in_(ids), Run.finished_at <= moment)
        return int(s.scalar(query) or 0)


def rendered_by(ctx: ServiceContext, ids: Sequence[str], moment: datetime) -> int:
    """How many of ``ids`` had a finished render at ``moment``."""
    with ctx.db.read() as s:
        query = select(func.count(func.distinct(StageRecord.run_id))).where(
            StageRecord.run_id.in_(ids),
            StageRecord.stage == "render",
            StageRecord.finished_at <= moment,
        )
        return int(s.scalar(query) or 0)


def lanes(ctx: ServiceContext, ids: Sequence[str]) -> set[str | None]:
    """The lanes the check stage gave ``ids``."""
    with ctx.db.read() as s:
        return set(s.scalars(select(Run.lane).where(Run.id.in_(ids))))


def wait_for(what: str, ready: Callable[[], bool], poll_s: float = 0.2) -> None:
    """Wait until ``ready()`` (the deadline only bounds a hang)."""
    deadline = time.monotonic() + HANG_S
    while not ready():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(poll_s)
