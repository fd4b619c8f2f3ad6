"""Fair claims for the embedded executor: one lane at a time, submitters in turn.

Within a lane, the next claim goes to the submitter (API token; the CLI's runs, without one, are
one more submitter) with the fewest runs of that lane in progress right now; ties go to the one
served least recently (``runs.claimed_at``), then to the one whose oldest waiting run is the
oldest; that submitter's oldest claimable run is claimed. This is round-robin across submitters,
also with a single worker: a token that queued 500 runs holds at most its turn of the workers, a
token arriving later gets the next free worker, and both then alternate. The counts come from
the run rows themselves, so the turn holds across every process claiming from the same database.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.orm import Session

from service.pipeline.lanes import CHEAP, HEAVY, Lane
from service.storage import Run


def in_lane(lane: Lane) -> ColumnElement[bool]:
    """Runs of ``lane`` (an unchecked run waits in the cheap lane: checking is cheap)."""
    if lane == HEAVY:
        return Run.lane == HEAVY
    return or_(Run.lane.is_(None), Run.lane == CHEAP)


def claimable(now: datetime) -> ColumnElement[bool]:
    """Unfinished runs without a live lease."""
    return and_(
        Run.status != "done",
        or_(Run.lease_expires_at.is_(None), Run.lease_expires_at < now),
    )


def submitters_in_turn(s: Session, lane: Lane, now: datetime) -> list[int | None]:
    """Submitters with claimable runs in ``lane``, the one whose turn it is first.

    Fewest runs of the lane in progress first; then the one served least recently (never
    served first); then the one whose oldest waiting run is the oldest.
    """
    waiting = {
        who: oldest
        for who, oldest in s.execute(
            select(Run.submitted_by, func.min(Run.submitted_at))
            .where(claimable(now), in_lane(lane))
            .group_by(Run.submitted_by)
        ).all()
    }
    if not waiting:
        return []
    busy = _per_submitter(
        s,
        list(waiting),
        func.count(Run.id),
        and_(Run.status == "running", Run.lease_expires_at >= now, in_lane(lane)),
    )
    served = _per_submitter(s, list(waiting), func.max(Run.claimed_at), Run.claimed_at.is_not(None))

    def turn(who: int | None) -> tuple[int, bool, datetime | None, datetime]:
        last = served.get(who)
        return (int(busy.get(who) or 0), last is not None, last, waiting[who])

    return sorted(waiting, key=turn)


def _per_submitter(
    s: Session, who: list[int | None], measure: ColumnElement[Any], where: ColumnElement[bool]
) -> dict[int | None, Any]:
    """``measure`` of the runs matching ``where``, per submitter among ``who``."""
    ids = [w for w in who if w is not None]
    mine: ColumnElement[bool] = Run.submitted_by.in_(ids)
    if None in who:
        mine = or_(mine, Run.submitted_by.is_(None))
    rows = s.execute(
        select(Run.submitted_by, measure).where(where, mine).group_by(Run.submitted_by)
    ).all()
    return {w: value for w, value in rows}


def next_run(s: Session, lane: Lane, now: datetime, *, lock: bool) -> Run | None:
    """The claimable run of ``lane`` whose turn it is, or None.

    With ``lock`` the row is locked, skipping rows other workers hold (PostgreSQL).
    """
    for who in submitters_in_turn(s, lane, now):
        mine = Run.submitted_by.is_(None) if who is None else Run.submitted_by == who
        q = (
            select(Run)
            .where(claimable(now), in_lane(lane), mine)
            .order_by(Run.submitted_at, Run.id)
            .limit(1)
        )
        if lock:
            q = q.with_for_update(skip_locked=True)
        run = s.scalars(q).first()
        if run is not None:
            return run
    return None
