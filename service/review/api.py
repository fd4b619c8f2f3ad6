"""``/v1/reviews``: the blinded review queue over HTTP (reviewer and admin roles).

Mounted by the app factory (``service.api.app.OPTIONAL_ROUTERS`` lists
``service.review.api:router``). Responses are built from allow-listed fields only
(:mod:`service.review.views`): never a run id, model label, provider or ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from regua.settings import Settings
from service.api.deps import Caller, Ctx
from service.auth import Principal
from service.context import ServiceContext
from service.review import store
from service.review.agreement import ReviewStatus
from service.review.queue import QueuePolicy
from service.review.views import item_summary, reviewer_item

router = APIRouter(prefix="/v1/reviews", tags=["reviews"])


def policy_from(settings: Settings) -> QueuePolicy:
    """The queue policy in force (``REGUA_REVIEW_*`` settings)."""
    return QueuePolicy(
        seed=settings.review_seed,
        audit_rate=settings.review_audit_rate,
        reviews_per_item=settings.reviews_per_item,
        reviews_per_audit_item=settings.reviews_per_audit_item,
    )


def reviewer_of(principal: Principal) -> store.Reviewer:
    """The principal as a reviewer (reviewer or admin role, else 403)."""
    principal.require("reviewer")
    return store.Reviewer(principal.token_id, principal.name, principal.role)


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
) -> dict[str, Any]:
    """Sync the queue, then the reviewer's next item with their progress (shared by pages).

    ``item_id`` asks for one particular item; it is honoured only when that item is available
    to this reviewer (not labelled by them, not resolved). ``skip`` passes over items for now
    (they stay in the queue)."""
    policy = policy_from(ctx.settings)
    with ctx.db.write() as s:
        store.sync_queue(s, policy)
        items = store.available_items(s, reviewer, policy.seed)
        done = store.reviewed_count(s, reviewer)
        rest = [i for i in items if i.id not in set(skip)]
        fallback = rest[0] if rest else (items[0] if items else None)  # skipped come back last
        chosen = next((i for i in items if i.id == item_id), fallback)
        item = reviewer_item(s, chosen, policy.seed) if chosen is not None else None
    return {"item": item, "progress": {"done": done, "left": len(items)}}


@router.get("/next")
def next_item(ctx: Ctx, caller: Caller, skip: list[str] = Query(default=[])) -> dict[str, Any]:
    """The next item this reviewer should label (``item`` is null when none is left).

    Disputed items the caller took no part in come first (the caller adjudicates them);
    ``skip`` (repeatable) passes over items for now."""
    return next_payload(ctx, reviewer_of(caller), skip=skip)


@router.post("/{item_id}")
def post_review(item_id: str, body: ReviewBody, ctx: Ctx, caller: Caller) -> dict[str, Any]:
    """Label an item. Resolving it appends a ``review`` evaluation of the run (nothing is
    overwritten). 409 when you already labelled it or it is resolved; 422 for a bad status."""
    reviewer = reviewer_of(caller)
    with ctx.db.write() as s:
        result = store.submit_review(
            s, item_id, reviewer, body.status, body.note, body.time_s, ctx.blobs
        )
    return {
        "item_id": result.item_id,
        "state": result.state,
        "adjudication": result.adjudication,
        "final": result.final_label,
        "outcome_recomputed": result.evaluation_id is not None,
    }


@router.get("")
def list_reviews(
    ctx: Ctx,
    caller: Caller,
    status: Literal["open", "disputed", "resolved"] | None = Query(default=None),
    limit: int = Query(default=500, ge=1, le=5000),
    offset: int = Query(default=0, ge=0),
) -> dict[str, Any]:
    """Queue items (optionally of one state). Admins also get reviewer agreement (simple and
    Cohen's kappa) and, per judge profile, how many audited automatic passes were overturned."""
    reviewer = reviewer_of(caller)
    policy = policy_from(ctx.settings)
    with ctx.db.write() as s:
        store.sync_queue(s, policy)
        rows = store.list_items(s, status, limit, offset)
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
    return out
