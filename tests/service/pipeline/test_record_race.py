"""A stage recorded by another job between this job's look-up and its write (a re-delivered job
on another worker) is not recorded twice, its writer's rows are rolled back with the refused
record, and no failed attempt is counted (the unique ``(run, stage, version)`` decides)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from service.context import ServiceContext
from service.pipeline.runner import (
    Known,
    Stage,
    StageContext,
    Writer,
    Written,
    load_task,
    run_stage,
)
from service.pipeline.submit import Submission
from service.storage import Run, StageAttempt, StageRecord

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]  # the ctx fixture's render pool

GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


class Nothing(BaseModel):
    """An empty stage detail."""


def test_a_stage_recorded_meanwhile_is_not_recorded_twice(ctx: ServiceContext) -> None:
    (run_id,) = ctx.submit([Submission("pelican-bicycle-structured@1", "m", GOOD)], None)
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        task = load_task(s, run)

    def compute(_ctx: StageContext) -> Writer:
        with ctx.db.write() as s:  # the other job records the stage first
            s.add(StageRecord(run_id=run_id, stage="probe", version="1", status="done", attempts=1))

        def write(s: Session) -> Written:  # a row of this job's writer, to be rolled back
            s.add(StageAttempt(run_id=run_id, stage="probe-writer", version="1", error="x"))
            return "done", Nothing()

        return write

    stage = Stage("probe", lambda _ctx: "1", compute)
    context = StageContext(ctx.db, ctx.blobs, ctx.machinery, run_id, task)
    assert run_stage(context, stage, Known("1", 0)) is True
    with ctx.db.read() as s:
        records = s.scalars(
            select(StageRecord).where(StageRecord.run_id == run_id, StageRecord.stage == "probe")
        ).all()
        attempts = s.scalars(select(StageAttempt).where(StageAttempt.run_id == run_id)).all()
    assert [(r.attempts, r.detail) for r in records] == [(1, None)]  # the other job's, alone
    assert attempts == []  # neither the writer's row nor a failed attempt
