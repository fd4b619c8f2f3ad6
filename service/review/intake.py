"""Turning finished runs into queue items: once per evaluation, as the run finishes.

The pipeline calls :func:`queue_run` in the transaction that marks a run ``done`` (through the
machinery's ``on_done`` hooks, wired by :class:`service.context.ServiceContext`), so a run's
items exist as soon as it is finished and nobody's ``/next`` has to create them. Evaluations
appended later to finished runs (re-scoring) and runs finished before this existed are picked
up by :func:`catch_up`, a bounded step that writes only when something is left to scan.
Every evaluation is scanned once (``review_scans``); each (run, criterion) gets at most one item.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import defaultdict
from dataclasses import replace

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from regua.records import field_dict
from service.review.queue import CriterionState, QueuePolicy, RunSnapshot, Vote, items_for_run
from service.storage import Database
from service.storage.models import CriterionOutcomeRow, Evaluation, Run, VerdictRow
from service.storage.review_models import ReviewItem, ReviewScan

SCAN_LOCK_KEY = 0x7265_7669_6577  # one scanner at a time on PostgreSQL ("review")
CATCH_UP_LIMIT = 25
"""Evaluations one :func:`catch_up` step scans at most (a short write, never a bulk one)."""
CATCH_UP_QUIET_S = 2.0
"""After finding nothing to scan, how long :func:`catch_up` does not look again."""
_QUIET_UNTIL: weakref.WeakKeyDictionary[Database, float] = weakref.WeakKeyDictionary()
_QUIET_LOCK = threading.Lock()


def _is_human(profile_id: str) -> bool:
    return profile_id.startswith("human")


def _counted(stored_votes: object, profile_id: str) -> bool:
    """Whether the jury counted this judge's vote.

    Ineligible judges' verdicts are kept for inspection only, so an audit never charges them
    with a pass they did not decide.
    """
    if not isinstance(stored_votes, list):
        return True
    for vote in stored_votes:
        if isinstance(vote, dict) and vote.get("judge_profile_id") == profile_id:
            return bool(vote.get("eligible", True))
    return True


def snapshot_of(session: Session, run: Run, evaluation: Evaluation) -> RunSnapshot:
    """Reduce a stored evaluation to what the queue needs."""
    votes: dict[str, list[Vote]] = defaultdict(list)
    for v in session.scalars(select(VerdictRow).where(VerdictRow.evaluation_id == evaluation.id)):
        kind = "human" if _is_human(v.judge_profile_id) else "auto"
        votes[v.criterion].append(Vote(v.judge_profile_id, kind, v.status))
    rows = session.scalars(
        select(CriterionOutcomeRow)
        .where(CriterionOutcomeRow.evaluation_id == evaluation.id)
        .order_by(CriterionOutcomeRow.id)
    ).all()
    criteria = tuple(
        CriterionState(
            row.criterion,
            row.kind,
            row.status,
            tuple(
                replace(v, eligible=_counted(row.votes, v.judge_profile_id))
                for v in votes[row.criterion]
            ),
            row.review_reason,
        )
        for row in rows
    )
    queued = set(session.scalars(select(ReviewItem.criterion).where(ReviewItem.run_id == run.id)))
    human = {c.criterion_id for c in criteria if any(v.judge_kind == "human" for v in c.votes)}
    return RunSnapshot(
        run.id, str(evaluation.id), evaluation.outcome, criteria, frozenset(queued | human)
    )


def queue_evaluation(
    session: Session, run: Run, evaluation: Evaluation, policy: QueuePolicy
) -> int:
    """Create the items one evaluation of a finished run calls for (once); the count created.

    A ``review`` evaluation (written by a label) is recorded but raises no new item.
    """
    if session.get(ReviewScan, evaluation.id) is not None:
        return 0
    specs = (
        []
        if evaluation.kind == "review"
        else items_for_run(snapshot_of(session, run, evaluation), policy)
    )
    wanted = [spec.item_id for spec in specs]
    have = (
        set(session.scalars(select(ReviewItem.id).where(ReviewItem.id.in_(wanted))))
        if wanted
        else set()
    )  # one query for every item, not one per criterion
    created = 0
    for spec in specs:
        if spec.item_id in have:
            continue
        have.add(spec.item_id)
        session.add(
            ReviewItem(
                **field_dict(spec, "run_id", "kind", "original_status", "suggestion", "reason"),
                id=spec.item_id,
                criterion=spec.criterion_id,
                evaluation_id=evaluation.id,
                audited_judges=list(spec.audited_judges),
                reviews_needed=spec.reviews_needed,
                state="open",
            )
        )
        created += 1
    session.add(ReviewScan(evaluation_id=evaluation.id, run_id=run.id, items=len(specs)))
    session.flush()
    return created


def queue_run(session: Session, run_id: str, policy: QueuePolicy) -> int:
    """Queue a finished run's current evaluation (the pipeline's ``on_done`` step)."""
    run = session.get(Run, run_id)
    if run is None or run.status != "done" or run.current_evaluation_id is None:
        return 0
    evaluation = session.get(Evaluation, run.current_evaluation_id)
    if evaluation is None:
        return 0
    return queue_evaluation(session, run, evaluation, policy)


def unscanned(session: Session, limit: int | None = None) -> list[int]:
    """Current evaluations of finished runs not turned into items yet (oldest first)."""
    query = (
        select(Run.current_evaluation_id)
        .outerjoin(ReviewScan, ReviewScan.evaluation_id == Run.current_evaluation_id)
        .where(
            Run.status == "done",
            Run.current_evaluation_id.is_not(None),
            ReviewScan.evaluation_id.is_(None),
        )
        .order_by(Run.current_evaluation_id)
    )
    if limit is not None:
        query = query.limit(limit)
    return [int(i) for i in session.scalars(query) if i is not None]


def sync_queue(session: Session, policy: QueuePolicy, limit: int | None = None) -> int:
    """Queue every (or the ``limit`` oldest) finished run's not-yet-scanned current evaluation.

    Idempotent: each evaluation is scanned once; each (run, criterion) gets at most one item.
    Returns the number of items created.
    """
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCAN_LOCK_KEY})
    created = 0
    for evaluation_id in unscanned(session, limit):
        evaluation = session.get(Evaluation, evaluation_id)
        run = session.get(Run, evaluation.run_id) if evaluation is not None else None
        if evaluation is not None and run is not None:
            created += queue_evaluation(session, run, evaluation, policy)
    return created


def catch_up(db: Database, policy: QueuePolicy, limit: int = CATCH_UP_LIMIT) -> int:
    """Queue at most ``limit`` evaluations left unscanned; no write when none is left.

    Called before handing out work: in the steady state (runs are queued as they finish) it
    finds nothing, and then this process does not look again for :data:`CATCH_UP_QUIET_S`
    seconds; after a re-scoring batch it takes one short write per call until none is left.
    """
    now = time.monotonic()
    with _QUIET_LOCK:
        if now < _QUIET_UNTIL.get(db, 0.0):
            return 0
    with db.read() as s:
        pending = bool(unscanned(s, 1))
    if not pending:
        with _QUIET_LOCK:
            _QUIET_UNTIL[db] = now + CATCH_UP_QUIET_S
        return 0
    with db.write() as s:
        return sync_queue(s, policy, limit)
