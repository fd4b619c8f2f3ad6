"""Stage jobs as procrastinate rows, deferred inside the caller's transaction (PostgreSQL).

A run's first stage is deferred in the transaction that stores the run; each later stage in the
transaction that records the stage before it (a :class:`~service.pipeline.runner.Machinery`
``on_recorded`` hook), so a job exists exactly when the outcome it follows is committed. Jobs
are inserted through procrastinate's own SQL function ``procrastinate_defer_jobs_v1`` on the
SQLAlchemy session's connection. The queueing lock ``<run>:<stage>:<PIPELINE>`` keeps at most one
waiting job per run and stage; a second defer of the same stage is dropped (inside a savepoint,
so the caller's transaction goes on). The idempotence key of the work itself is the stage
record's ``(run, stage, version)``: a re-delivered job whose stage is recorded does nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.pipeline.stages import STAGES

STAGE_TASK = "regua.stage"
"""The procrastinate task name of every pipeline stage job (args: run_id, stage)."""
PIPELINE = "1"
"""Version of the job layout (part of the queueing lock)."""
RENDER_QUEUE, JUDGE_QUEUE, GENERATE_QUEUE = "render", "judge", "generate"
QUEUES = (RENDER_QUEUE, JUDGE_QUEUE, GENERATE_QUEUE)
QUEUE_OF_STAGE = {"check": RENDER_QUEUE, "render": RENDER_QUEUE}
"""Stages not named here (evaluate, finalize) go to the judge queue."""

_DEFER = text(
    "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW(:queue, :task, :priority, NULL, :qlock, "
    "CAST(:args AS jsonb), NULL)::procrastinate_job_to_defer_v1])"
)


def queue_of(stage: str) -> str:
    """The queue a stage's job goes to: render for check and render, judge for the rest."""
    return QUEUE_OF_STAGE.get(stage, JUDGE_QUEUE)


def next_stage(stage: str) -> str | None:
    """The stage after ``stage`` in :data:`~service.pipeline.stages.STAGES` (None: the last)."""
    names = [s.name for s in STAGES]
    index = names.index(stage)
    return names[index + 1] if index + 1 < len(names) else None


def defer_stage(session: Session, run_id: str, stage: str) -> bool:
    """Insert the job of ``stage`` of ``run_id`` in the session's transaction.

    Later stages have a higher priority, so runs already under way finish before new runs
    start (a batch flows through instead of checking everything first). Returns False when a
    job of that run and stage already waits (the new one is dropped, the transaction goes on).
    """
    params = {
        "queue": queue_of(stage),
        "task": STAGE_TASK,
        "priority": [st.name for st in STAGES].index(stage),
        "qlock": f"{run_id}:{stage}:{PIPELINE}",
        "args": json.dumps({"run_id": run_id, "stage": stage}),
    }
    savepoint = session.begin_nested()
    try:
        session.execute(_DEFER, params)
    except IntegrityError:  # the queueing lock: that stage already has a waiting job
        savepoint.rollback()
        return False
    savepoint.commit()
    return True


def defer_first(session: Session, run_ids: Sequence[str]) -> None:
    """Defer the first stage of each new run (inside the transaction that stores the runs)."""
    for run_id in run_ids:
        defer_stage(session, run_id, STAGES[0].name)


def defer_next(session: Session, run_id: str, stage: str) -> None:
    """Defer the stage after ``stage`` (inside the transaction that records ``stage``)."""
    following = next_stage(stage)
    if following is not None:
        defer_stage(session, run_id, following)


ORPHANS = text(
    "SELECT r.id FROM runs r WHERE r.status <> 'done' AND NOT EXISTS ("
    " SELECT 1 FROM procrastinate_jobs j WHERE j.task_name = :task"
    " AND j.status IN ('todo', 'doing') AND j.args->>'run_id' = r.id)"
    " ORDER BY r.submitted_at LIMIT :limit"
)


def orphan_runs(session: Session, limit: int = 500) -> list[str]:
    """Unfinished runs that no waiting or running job will advance (e.g. a job that failed)."""
    return list(session.scalars(ORPHANS, {"task": STAGE_TASK, "limit": limit}))


def job_counts(session: Session) -> dict[str, int]:
    """Stage jobs by status (``todo``, ``doing``, ``succeeded``, ``failed`` …)."""
    rows = session.execute(
        text(
            "SELECT status::text, count(*) FROM procrastinate_jobs WHERE task_name = :task "
            "GROUP BY status"
        ),
        {"task": STAGE_TASK},
    ).all()
    return {str(status): int(count) for status, count in rows}
