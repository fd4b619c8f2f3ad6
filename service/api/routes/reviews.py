"""``/v1/reviews``: the blinded review queue over HTTP (reviewer and admin roles).

Responses are built from allow-listed fields only (:mod:`service.review.views`): never a run
id, model label, provider or ranking. What a reviewer does (take the next item, label it) is
:mod:`service.review.actions`, shared with the review page.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from service.access.pools import hidden_refs, sees_hidden
from service.api.deps import Ctx, Reviewer
from service.api.text import Offset, Text
from service.review import store
from service.review.actions import label_item, next_item_for, reviewer_of
from service.review.agreement import ReviewStatus
from service.review.payloads import ItemLine, NextItem
from service.review.policy import queue_policy
from service.review.views import item_summary

router = APIRouter(prefix="/v1/reviews", tags=["reviews"])


class Posted(BaseModel):
    """What a label did: the item's state and, once resolved, whether the outcome moved."""

    item_id: str
    state: str
    adjudication: bool
    final: str | None
    outcome_recomputed: bool


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
    note: Text = Field(default="", max_length=4000)
    time_s: float | None = Field(default=None, ge=0)


@router.get("/next", response_model=NextItem)
def next_item(ctx: Ctx, caller: Reviewer, skip: list[str] = Query(default=[])) -> NextItem:
    """The next item this reviewer should label (``item`` is null when none is left).

    Disputed items the caller took no part in come first (the caller adjudicates them);
    ``skip`` (repeatable) passes over items for now.
    """
    policy = queue_policy(ctx.settings, ctx.secret)
    return next_item_for(ctx.db, policy, reviewer_of(caller), skip=skip)


@router.post("/{item_id}", response_model=Posted)
def post_review(item_id: str, body: ReviewBody, ctx: Ctx, caller: Reviewer) -> Posted:
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
    caller: Reviewer,
    status: Literal["open", "disputed", "resolved"] | None = Query(default=None),
    limit: int = Query(default=500, ge=1, le=5000),
    offset: Offset = 0,
) -> ReviewList:
    """Queue items (optionally of one state); items of reserved tasks are for admins only.

    Admins also get reviewer agreement (simple and Cohen's kappa) and, per judge profile, how
    many audited automatic passes were overturned.
    """
    reviewer = reviewer_of(caller)
    policy = queue_policy(ctx.settings, ctx.secret)
    with ctx.db.write() as s:
        store.sync_queue(s, policy)
        hidden = () if sees_hidden(reviewer.role) else sorted(hidden_refs(s))
        rows = store.list_items(s, status, limit, offset, hidden)
        counts = store.review_counts(s)
        refs = store.task_refs(s, {i.run_id for i in rows})
        listed = ReviewList(
            limit=limit,
            offset=offset,
            items=[
                item_summary(i, policy.seed, counts.get(i.id, 0), refs.get(i.run_id, ""))
                for i in rows
            ],
        )
        if reviewer.role == "admin":
            listed.agreement = [
                ReviewerAgreement.model_validate(p, from_attributes=True)
                for p in store.agreement(s)
            ]
            listed.audits = [
                JudgeAudits.model_validate(a, from_attributes=True) for a in store.audit_stats(s)
            ]
    return listed
