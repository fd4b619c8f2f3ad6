"""``/v1/reviews``: the blinded review queue over HTTP (reviewer and admin roles).

Responses are built from allow-listed fields only (:mod:`service.review.views`): never a run
id, model label, provider or ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from regua.errors import NotFoundError, PermissionDeniedError
from regua.settings import Settings
from service.access.pools import hidden_refs, sees_hidden
from service.access.tokens import Principal
from service.api.deps import Caller, Ctx
from service.context import ServiceContext
from service.review import store
from service.review.agreement import ReviewStatus
from service.review.intake import catch_up
from service.review.picking import next_for_reviewer
from service.review.policy import queue_policy
from service.review.queue import QueuePolicy
from service.review.views import item_summary, reviewer_item
from service.storage import ReviewItem, Run
from service.storage.blobs import BlobStore

router = APIRouter(prefix="/v1/reviews", tags=["reviews"])


def policy_from(settings: Settings, secret: bytes) -> QueuePolicy:
    """The queue policy in force (``REGUA_REVIEW_*`` settings), keyed by the installation secret.

    See :func:`service.review.policy.queue_policy`.
    """
    return queue_policy(settings, secret)


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

    Shared by ``POST /v1/reviews/{item}`` and the review page. A reviewer never labels a run
    their own token submitted (403, nothing stored); an admin's label is stored as unblinded.
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


class Progress(BaseModel):
    """How many labels the reviewer gave, and how many items are left for them."""

    done: int
    left: int


class NextItem(BaseModel):
    """The reviewer's next item (``null`` when none is left) and their progress."""

    item: dict[str, Any] | None
    """The blinded item: opaque work label, task, criterion, frames, suggestion, choices."""
    progress: Progress


class Posted(BaseModel):
    """What a label did: the item's state and, once resolved, whether the outcome moved."""

    item_id: str
    state: str
    adjudication: bool
    final: str | None
    outcome_recomputed: bool


class ItemLine(BaseModel):
    """A short, blinded line about an item."""

    item_id: str
    work: str
    task: str
    criterion: str
    kind: str
    state: str
    reviews: int
    reviews_needed: int
    final: str | None


class ReviewerAgreement(BaseModel):
    """Agreement between two reviewers on the items both labelled independently."""

    reviewer_a: str
    reviewer_b: str
    items: int
    agreement: float | None
    kappa: float | None


class JudgeAudits(BaseModel):
    """Audited automatic passes of one judge: confirmed, overturned, not confirmed."""

    judge_profile_id: str
    audited: int
    confirmed: int
    overturned: int
    unconfirmed: int
    overturn_rate: float | None


class ReviewList(BaseModel):
    """Queue items; for admins also reviewer agreement and per-judge audit counts."""

    limit: int
    offset: int
    items: list[ItemLine]
    agreement: list[ReviewerAgreement] | None = None
    audits: list[JudgeAudits] | None = None


class ReviewBody(BaseModel):
    """A label: one of the four statuses, an optional note and (animated tasks) a frame time."""

    status: ReviewStatus
    note: str = Field(default="", max_length=4000)
    time_s: float | None = Field(default=None, ge=0)


def next_payload(
    ctx: ServiceContext,
    reviewer: store.Reviewer,
    item_id: str | None = None,
    skip: Sequence[str] = (),
) -> NextItem:
    """The reviewer's next item with their progress (shared by pages); a read, not a write.

    Items are created as runs finish (:mod:`service.review.intake`); only evaluations left
    unscanned (re-scoring) are queued first, a bounded step. ``item_id`` asks for one
    particular item; it is honoured only when that item is available to this reviewer (not
    labelled by them, not resolved, not of a run their token submitted). ``skip`` passes over
    items for now (they stay in the queue).
    """
    policy = policy_from(ctx.settings, ctx.secret)
    catch_up(ctx.db, policy)
    with ctx.db.read() as s:
        hidden = () if sees_hidden(reviewer.role) else sorted(hidden_refs(s))
        pick = next_for_reviewer(
            s, reviewer.id, policy.seed, want=item_id, skip=skip, hidden=hidden
        )
        done = store.reviewed_count(s, reviewer)
        item = reviewer_item(s, pick.item, policy.seed) if pick.item is not None else None
    return NextItem(item=item, progress=Progress(done=done, left=pick.left))


@router.get("/next", response_model=NextItem)
def next_item(ctx: Ctx, caller: Caller, skip: list[str] = Query(default=[])) -> NextItem:
    """The next item this reviewer should label (``item`` is null when none is left).

    Disputed items the caller took no part in come first (the caller adjudicates them);
    ``skip`` (repeatable) passes over items for now.
    """
    return next_payload(ctx, reviewer_of(caller), skip=skip)


@router.post("/{item_id}", response_model=Posted)
def post_review(item_id: str, body: ReviewBody, ctx: Ctx, caller: Caller) -> Posted:
    """Label an item.

    Resolving it appends a ``review`` evaluation of the run (nothing is overwritten). 409 when
    you already labelled it or it is resolved; 422 for a bad status; 403 for an item of a run
    your token submitted.
    """
    reviewer = reviewer_of(caller)
    with ctx.db.write() as s:
        result = label_item(s, ctx.blobs, item_id, reviewer, body.status, body.note, body.time_s)
    return Posted(
        item_id=result.item_id,
        state=result.state,
        adjudication=result.adjudication,
        final=result.final_label,
        outcome_recomputed=result.evaluation_id is not None,
    )


@router.get("", response_model=ReviewList, response_model_exclude_unset=True)
def list_reviews(
    ctx: Ctx,
    caller: Caller,
    status: Literal["open", "disputed", "resolved"] | None = Query(default=None),
    limit: int = Query(default=500, ge=1, le=5000),
    offset: int = Query(default=0, ge=0),
) -> ReviewList:
    """Queue items (optionally of one state); items of reserved tasks are for admins only.

    Admins also get reviewer agreement (simple and Cohen's kappa) and, per judge profile, how
    many audited automatic passes were overturned.
    """
    reviewer = reviewer_of(caller)
    policy = policy_from(ctx.settings, ctx.secret)
    with ctx.db.write() as s:
        store.sync_queue(s, policy)
        hidden = () if sees_hidden(reviewer.role) else sorted(hidden_refs(s))
        rows = store.list_items(s, status, limit, offset, hidden)
        counts = store.review_counts(s)
        refs = store.task_refs(s, {i.run_id for i in rows})
        out: dict[str, Any] = {
            "limit": limit,
            "offset": offset,
            "items": [
                item_summary(i, policy.seed, counts.get(i.id, 0), refs.get(i.run_id, ""))
                for i in rows
            ],
        }
        if reviewer.role == "admin":
            out["agreement"] = [
                {
                    "reviewer_a": p.reviewer_a,
                    "reviewer_b": p.reviewer_b,
                    "items": p.items,
                    "agreement": p.agreement,
                    "kappa": p.kappa,
                }
                for p in store.agreement(s)
            ]
            out["audits"] = [
                {
                    "judge_profile_id": a.judge_profile_id,
                    "audited": a.audited,
                    "confirmed": a.confirmed,
                    "overturned": a.overturned,
                    "unconfirmed": a.unconfirmed,
                    "overturn_rate": a.overturn_rate,
                }
                for a in store.audit_stats(s)
            ]
    return ReviewList.model_validate(out)
