"""Stage jobs as procrastinate rows, deferred inside the caller's transaction (PostgreSQL).

A run's first stage is deferred in the transaction that stores the run; a later stage, when the
job that recorded the stage before it does not go on with it itself (:mod:`.chain`: the kind of
work changes), in the transaction that records that stage, so a job exists exactly when the
outcome it follows is committed. Jobs
are inserted through procrastinate's own SQL function ``procrastinate_defer_jobs_v1`` on the
SQLAlchemy session's connection. The queueing lock ``<run>:<stage>:<PIPELINE>`` keeps at most one
waiting job per run and stage; a second defer of the same stage is dropped (inside a savepoint,
so the caller's transaction goes on). The idempotence key of the work itself is the stage
record's ``(run, stage, version)``: a re-delivered job whose stage is recorded does nothing.

Lanes: a render job goes to the ``render`` queue, or to ``render_heavy`` when the check stage put
the run in the heavy lane (:mod:`.lanes`); each queue has its own workers and concurrency, so
cheap renders never wait behind animated ones. Fairness: a job's priority falls by
:data:`FAIR_STEP` for every job of the same submitter already waiting in its queue, so the
submitters' jobs interleave (the first job of every submitter, then the second of each, …)
whatever order they were deferred in; procrastinate takes the highest priority first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.pipeline.lanes import HEAVY
from service.pipeline.stages import STAGES
from service.storage import Run

STAGE_TASK = "regua.stage"
"""The procrastinate task name of every pipeline stage job (args: run_id, stage)."""
GENERATE_TASK = "regua.generate"
"""The procrastinate task of generation and experiment jobs (args: kind, args) on ``generate``."""
PIPELINE = "1"
"""Version of the job layout (part of the queueing lock)."""
RENDER_QUEUE, JUDGE_QUEUE, GENERATE_QUEUE = "render", "judge", "generate"
HEAVY_QUEUE = "render_heavy"
"""Render jobs of heavy-lane runs (animated, filter-laden): workers and concurrency of their own."""
QUEUES = (RENDER_QUEUE, HEAVY_QUEUE, JUDGE_QUEUE, GENERATE_QUEUE)
FAIR_STEP = 10
"""Priority lost per job of the same submitter waiting ahead in the queue (more than the stage
order's span, so fairness between submitters comes before a run's own flow-through)."""
QUEUE_OF_STAGE = {"check": RENDER_QUEUE, "render": RENDER_QUEUE}
"""Stages not named here (evaluate, finalize) go to the judge queue."""

_DEFER = text(
    "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW(:queue, :task, :priority, NULL, :qlock, "
    "CAST(:args AS jsonb), NULL)::procrastinate_job_to_defer_v1])"
)


_DEFER_READING_RUN = text(
    "SELECT procrastinate_defer_jobs_v1(ARRAY[ROW(q.queue, CAST(:task AS varchar),"
    " CAST(:base - :step * (SELECT count(*) FROM procrastinate_jobs j"
    " WHERE j.queue_name = q.queue AND j.status = 'todo' AND j.task_name = CAST(:task AS varchar)"
    " AND (j.args->>'submitter') IS NOT DISTINCT FROM CAST(q.who AS text)) AS integer),"
    " NULL, CAST(:qlock AS varchar), jsonb_build_object('run_id', CAST(:run_id AS varchar),"
    " 'stage', CAST(:stage AS varchar), 'submitter', q.who), NULL)::procrastinate_job_to_defer_v1])"
    " FROM (SELECT r.submitted_by AS who, CASE WHEN r.lane = CAST(:heavy AS varchar)"
    " THEN CAST(:heavy_queue AS varchar) ELSE CAST(:queue AS varchar) END AS queue"
    " FROM runs r WHERE r.id = CAST(:run_id AS varchar)) AS q"
)
"""The job of a stage of a stored run, its queue, priority and arguments read in the statement."""


def queue_of(stage: str, lane: str | None = None) -> str:
    """The queue a stage's job goes to: render for check and render, judge for the rest.

    The render of a heavy-lane run goes to render_heavy.
    """
    if stage == "render" and lane == HEAVY:
        return HEAVY_QUEUE
    return QUEUE_OF_STAGE.get(stage, JUDGE_QUEUE)


_BACKLOG = text(
    "SELECT count(*) FROM procrastinate_jobs WHERE queue_name = :queue AND status = 'todo' "
    "AND task_name = :task AND (args->>'submitter') IS NOT DISTINCT FROM CAST(:who AS text)"
)


def backlog(session: Session, queue: str, submitter: int | None) -> int:
    """Stage jobs of ``submitter`` (None: the runs without a token) waiting in ``queue``."""
    who = None if submitter is None else str(submitter)
    params = {"queue": queue, "task": STAGE_TASK, "who": who}
    return int(session.scalar(_BACKLOG, params) or 0)


def next_stage(stage: str) -> str | None:
    """The stage after ``stage`` in :data:`~service.pipeline.stages.STAGES` (None: the last)."""
    names = [s.name for s in STAGES]
    index = names.index(stage)
    return names[index + 1] if index + 1 < len(names) else None


def defer_stage(
    session: Session, run_id: str, stage: str, ahead: int | None = None, *, fresh: bool = False
) -> bool:
    """Insert the job of ``stage`` of ``run_id`` in the session's transaction.

    The queue follows the stage and the run's lane. Priority: the submitter's jobs already
    waiting in that queue (``ahead``, counted when not given) cost :data:`FAIR_STEP` each; then
    later stages come first, so runs already under way finish before new runs start (a batch
    flows through instead of checking everything first). Returns False when a job of that run
    and stage already waits (the new one is dropped, the transaction goes on). Without
    ``ahead``, the run's submitter and lane, the count and the insert are one statement.
    ``fresh``: the run was stored in this very transaction, so no job of it can wait yet (the
    insert needs no savepoint: two round trips less).
    """
    base = [st.name for st in STAGES].index(stage)
    qlock = f"{run_id}:{stage}:{PIPELINE}"
    if ahead is None:
        statement, params = (
            _DEFER_READING_RUN,
            {
                "run_id": run_id,
                "stage": stage,
                "task": STAGE_TASK,
                "base": base,
                "step": FAIR_STEP,
                "qlock": qlock,
                "queue": queue_of(stage),
                "heavy": HEAVY,
                "heavy_queue": queue_of(stage, HEAVY),
            },
        )
    else:
        run = session.get(Run, run_id)
        submitter = run.submitted_by if run is not None else None
        statement, params = (
            _DEFER,
            {
                "queue": queue_of(stage, run.lane if run is not None else None),
                "task": STAGE_TASK,
                "priority": base - FAIR_STEP * ahead,
                "qlock": qlock,
                "args": json.dumps({"run_id": run_id, "stage": stage, "submitter": submitter}),
            },
        )
    if fresh:
        return session.execute(statement, params).first() is not None
    savepoint = session.begin_nested()
    try:
        deferred = session.execute(statement, params).first() is not None
    except IntegrityError:  # the queueing lock: that stage already has a waiting job
        savepoint.rollback()
        return False
    savepoint.commit()
    return deferred


def defer_first(session: Session, run_ids: Sequence[str]) -> None:
    """Defer the first stage of each new run (inside the transaction that stores the runs).

    The runs must be stored in this transaction (no job of theirs can exist yet). The
    submitter's waiting jobs are counted once per submitter, then each new job adds one.
    """
    first = STAGES[0].name
    ahead: dict[int | None, int] = {}
    for run_id in run_ids:
        run = session.get(Run, run_id)
        who = run.submitted_by if run is not None else None
        if who not in ahead:
            ahead[who] = backlog(session, queue_of(first), who)
        if defer_stage(session, run_id, first, ahead[who], fresh=True):
            ahead[who] += 1


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


GenerateArgs = dict[str, str | int | None]
"""The arguments of a generate job (ids, a generator name, a token id)."""


def defer_generate(session: Session, kind: str, args: GenerateArgs, key: str) -> bool:
    """Insert a job of ``kind`` on the ``generate`` queue in the session's transaction.

    ``key`` is its queueing lock (one waiting job per generation or experiment); False when
    one already waits (the new one is dropped, the transaction goes on).
    """
    params = {
        "queue": GENERATE_QUEUE,
        "task": GENERATE_TASK,
        "priority": 0,
        "qlock": f"{kind}:{key}",
        "args": json.dumps({"kind": kind, "args": args}),
    }
    savepoint = session.begin_nested()
    try:
        session.execute(_DEFER, params)
    except IntegrityError:  # the queueing lock: that job already waits
        savepoint.rollback()
        return False
    savepoint.commit()
    return True


_LIVE_GENERATE = text(
    "SELECT args FROM procrastinate_jobs WHERE task_name = :task AND status IN ('todo', 'doing')"
)


def live_generate_jobs(session: Session) -> list[tuple[str, GenerateArgs]]:
    """(kind, args) of every generate job waiting or running on the queue."""
    found: list[tuple[str, GenerateArgs]] = []
    for doc in session.scalars(_LIVE_GENERATE, {"task": GENERATE_TASK}):
        loaded = json.loads(doc) if isinstance(doc, str) else doc
        if isinstance(loaded, dict) and isinstance(loaded.get("args"), dict):
            found.append((str(loaded.get("kind")), dict(loaded["args"])))
    return found


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
