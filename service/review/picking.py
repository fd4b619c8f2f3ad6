"""Handing out work: a reviewer's next item, chosen from ids alone (no item built per call).

The candidates are the open and disputed items this reviewer has not labelled, of runs their
token did not submit: one query of ids and states. Disputed items come first, then open ones,
each in the reviewer's own shuffle (:func:`service.review.queue.order_for_reviewer`'s order);
skipped items come back last. Only the chosen item is loaded, so the cost at 10,000 open items
is one indexed scan of ids, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.review.queue import order_key, reviewer_mask
from service.storage.models import Run
from service.storage.review_models import ReviewItem, ReviewRow

OPEN_STATES = ("open", "disputed")
ITEMS, REVIEWS, RUNS = ReviewItem.__table__, ReviewRow.__table__, Run.__table__


@dataclass(frozen=True)
class Pick:
    """The reviewer's next item (None when nothing is left) and how many are left for them."""

    item: ReviewItem | None
    left: int


def candidates(session: Session, reviewer_id: int) -> list[tuple[str, str]]:
    """(id, state) of every item this reviewer may label now."""
    items, reviews, runs = ITEMS.c, REVIEWS.c, RUNS.c  # Core columns: no ORM work per row
    done = select(reviews.item_id).where(reviews.reviewer_id == reviewer_id)
    own = select(runs.id).where(runs.submitted_by == reviewer_id)
    query = select(items.id, items.state).where(
        items.state.in_(OPEN_STATES), items.id.not_in(done), items.run_id.not_in(own)
    )
    rows = session.connection().execute(query).fetchall()
    return [(i, state) for i, state in rows]


def next_for_reviewer(
    session: Session,
    reviewer_id: int,
    seed: int | str,
    *,
    want: str | None = None,
    skip: Sequence[str] = (),
) -> Pick:
    """The reviewer's next item: ``want`` when it is available to them, else the first in order.

    ``skip`` passes over items for now: they come back when nothing else is left.
    """
    rows = candidates(session, reviewer_id)
    if not rows:
        return Pick(None, 0)
    if want is not None and any(i == want for i, _ in rows):
        chosen = want
    else:
        mask = reviewer_mask(seed, f"reviewer-{reviewer_id}")
        skipped = set(skip)
        chosen = min(
            rows, key=lambda r: (r[0] in skipped, r[1] != "disputed", order_key(r[0]) ^ mask)
        )[0]
    return Pick(session.get(ReviewItem, chosen), len(rows))
