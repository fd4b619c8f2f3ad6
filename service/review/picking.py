"""Handing out work: a reviewer's next item, found with a few indexed range reads.

The candidates are the open and disputed items this reviewer has not labelled, of runs their
token did not submit. Disputed items come first, then open ones, each in the reviewer's own
shuffle (:func:`service.review.queue.order_for_reviewer`: ``order_key(id) XOR mask``); skipped
items come back last. Item ids are ``it_`` and hex digits, so the first item of that shuffle is
found by walking the ids' hex digits through the primary-key index — at each digit the one
closest to the reviewer's mask that still has a candidate — instead of reading every open item:
a handful of ``LIMIT 2`` range reads at 10,000 open items as at 10. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from service.review.queue import order_key, reviewer_mask
from service.storage.models import Run
from service.storage.review_models import ReviewItem, ReviewRow

OPEN_STATES = ("open", "disputed")
ITEMS, REVIEWS, RUNS = ReviewItem.__table__, ReviewRow.__table__, Run.__table__
HEX = "0123456789abcdef"
KEY_DIGITS = 15
"""Hex digits of an id that make its ``order_key`` (60 bits)."""


@dataclass(frozen=True)
class Pick:
    """The reviewer's next item (None when nothing is left) and how many are left for them."""

    item: ReviewItem | None
    left: int


def _available(reviewer_id: int, hidden: Sequence[str] = ()) -> list[ColumnElement[bool]]:
    """Not labelled by this reviewer, not of a run their token submitted, not of ``hidden``.

    ``hidden`` are task refs the reviewer may not see (reserved, :mod:`service.access.pools`).
    """
    items = ITEMS.c
    done = select(REVIEWS.c.item_id).where(REVIEWS.c.reviewer_id == reviewer_id)
    own = select(RUNS.c.id).where(RUNS.c.submitted_by == reviewer_id)
    conds: list[ColumnElement[bool]] = [items.id.not_in(done), items.run_id.not_in(own)]
    if hidden:
        conds.append(items.run_id.not_in(select(RUNS.c.id).where(RUNS.c.task_ref.in_(hidden))))
    return conds


def left_for(session: Session, reviewer_id: int, hidden: Sequence[str] = ()) -> int:
    """How many items this reviewer may label now."""
    available = _available(reviewer_id, hidden)
    query = select(func.count()).where(ITEMS.c.state.in_(OPEN_STATES), *available)
    return int(session.connection().execute(query).scalar() or 0)


def _ids_in(
    session: Session, conds: list[ColumnElement[bool]], lo: str, hi: str | None
) -> list[str]:
    """Up to two candidate ids in ``[lo, hi)``, read through the primary-key index."""
    query = select(ITEMS.c.id).where(ITEMS.c.id >= lo, *conds).order_by(ITEMS.c.id).limit(2)
    if hi is not None:
        query = query.where(ITEMS.c.id < hi)
    return [str(i) for i in session.connection().execute(query).scalars()]


def _first_in_order(
    session: Session, state: str, others: list[ColumnElement[bool]], mask: int
) -> str | None:
    """The candidate in ``state`` with the smallest ``order_key XOR mask``.

    A walk down the hex digits of the ids: at each digit, the one closest to the mask's that
    still has a candidate, until one candidate is left. None when there is none.
    """
    indexed = [ITEMS.c.state == state, *others]
    if session.connection().execute(select(ITEMS.c.id).where(*indexed).limit(1)).first() is None:
        return None
    # ``state || ''`` keeps SQLite on the primary-key index for the range reads
    conds = [ITEMS.c.state.concat("") == state, *others]
    digits = f"{mask:0{KEY_DIGITS}x}"[-KEY_DIGITS:]
    prefix = "it_"
    for depth in range(KEY_DIGITS):
        m = int(digits[depth], 16)
        for d in sorted(range(16), key=lambda x: x ^ m):
            hi = prefix + HEX[d + 1] if d < 15 else prefix + "g"
            found = _ids_in(session, conds, prefix + HEX[d], hi)
            if len(found) == 1 or (found and depth == KEY_DIGITS - 1):
                return found[0]
            if found:
                prefix += HEX[d]
                break
        else:
            break  # ids that are not it_<hex>: order them all (below)
    ids = [
        str(i) for i in session.connection().execute(select(ITEMS.c.id).where(*indexed)).scalars()
    ]
    ordered = sorted(ids, key=lambda i: order_key(i) ^ mask)
    return ordered[0] if ordered else None


def next_for_reviewer(
    session: Session,
    reviewer_id: int,
    seed: int | str,
    *,
    want: str | None = None,
    skip: Sequence[str] = (),
    hidden: Sequence[str] = (),
) -> Pick:
    """The reviewer's next item: ``want`` when it is available to them, else the first in order.

    ``skip`` passes over items for now: they come back when nothing else is left. Items of runs
    of ``hidden`` task refs are never offered.
    """
    left = left_for(session, reviewer_id, hidden)
    if left == 0:
        return Pick(None, 0)
    base = _available(reviewer_id, hidden)
    if want is not None:
        query = select(ITEMS.c.id).where(ITEMS.c.id == want, ITEMS.c.state.in_(OPEN_STATES), *base)
        if session.connection().execute(query).first() is not None:
            return Pick(session.get(ReviewItem, want), left)
    mask = reviewer_mask(seed, f"reviewer-{reviewer_id}")
    passes = [[ITEMS.c.id.not_in(list(skip))], []] if skip else [[]]
    for extra in passes:
        for state in ("disputed", "open"):
            chosen = _first_in_order(session, state, [*base, *extra], mask)
            if chosen is not None:
                return Pick(session.get(ReviewItem, chosen), left)
    return Pick(None, left)
