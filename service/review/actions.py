"""What a reviewer does: take the next item, and label it (shared by the API and the pages).

A reviewer never labels a run their own token submitted, and sees items of a reserved task only
as an admin (to anyone else such an item does not exist).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from regua.errors import NotFoundError, PermissionDeniedError
from service.access.pools import hidden_refs, sees_hidden
from service.access.tokens import Principal
from service.review import store
from service.review.intake import catch_up
from service.review.payloads import NextItem, Progress
from service.review.picking import next_for_reviewer
from service.review.queue import QueuePolicy
from service.review.views import reviewer_item
from service.storage import Database, ReviewItem, Run
from service.storage.blobs import BlobStore


def reviewer_of(principal: Principal) -> store.Reviewer:
    """The principal as a reviewer (reviewer or admin role, else 403)."""
    principal.require("reviewer")
    return store.Reviewer(principal.token_id, principal.name, principal.role)


def label_item(
    session: Session,
    blobs: BlobStore,
    item_id: str,
    reviewer: store.Reviewer,
    status: str,
    note: str = "",
    time_s: float | None = None,
) -> store.SubmitResult:
    """Store a label (status, note, frame time) unless the item is of the reviewer's own run.

    A reviewer never labels a run their own token submitted (403, nothing stored); an admin's
    label is stored as unblinded.
    """
    item = session.get(ReviewItem, item_id)
    if item is not None:
        run = session.get(Run, item.run_id)
        hidden = run is not None and run.task_ref in hidden_refs(session)
        if hidden and not sees_hidden(reviewer.role):  # reserved: admins only, as if unknown
            raise NotFoundError(f"no review item {item_id!r}")
        if run is not None and run.submitted_by == reviewer.id:
            raise PermissionDeniedError(
                "you submitted this run with this token; another reviewer must label it"
            )
    return store.submit_review(session, blobs, item_id, reviewer, status, note, time_s)


def next_item_for(
    db: Database,
    policy: QueuePolicy,
    reviewer: store.Reviewer,
    item_id: str | None = None,
    skip: Sequence[str] = (),
) -> NextItem:
    """The reviewer's next item with their progress; a read, not a write.

    Items are created as runs finish (:mod:`service.review.intake`); only evaluations left
    unscanned (re-scoring) are queued first, a bounded step. ``item_id`` asks for one
    particular item; it is honoured only when that item is available to this reviewer (not
    labelled by them, not resolved, not of a run their token submitted). ``skip`` passes over
    items for now (they stay in the queue).
    """
    catch_up(db, policy)
    with db.read() as s:
        hidden = () if sees_hidden(reviewer.role) else sorted(hidden_refs(s))
        pick = next_for_reviewer(
            s, reviewer.id, policy.seed, want=item_id, skip=skip, hidden=hidden
        )
        done = store.reviewed_count(s, reviewer)
        item = reviewer_item(s, pick.item, policy.seed) if pick.item is not None else None
    return NextItem(item=item, progress=Progress(done=done, left=pick.left))
