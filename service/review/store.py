"""Queue operations on the database: hand out, label, resolve (items come from ``intake``).

Every function takes an open SQLAlchemy session; the caller owns the transaction
(``Database.write()`` for changes). Reviewers are identified by their API token row id.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import judges
from regua.errors import ImmutableRecordError, InputError, NotFoundError, PermissionDeniedError
from service.evaluation.humans import human_verdicts_for_runs, record_name
from service.review.agreement import (
    REVIEW_STATUSES,
    Label,
    PairAgreement,
    pairwise_agreement,
    resolve,
)
from service.review.evaluation import append_review_evaluation
from service.review.intake import sync_queue as sync_queue
from service.review.outcome import AuditRecord, JudgeAuditStats, overturns_by_judge
from service.review.queue import order_for_reviewer
from service.storage.blobs import BlobStore, NewArtifact, record_artifact
from service.storage.models import (
    Artifact,
    Run,
    iso,
    utcnow,
)
from service.storage.review_models import ReviewItem, ReviewRow, ReviewScan

REVIEW_PROCEDURE_VERSION = "1"


class ReviewConflictError(ImmutableRecordError):
    """The item cannot take this label now (already labelled by you, or already resolved): 409."""


@dataclass(frozen=True)
class Reviewer:
    """Who is labelling: token row id, a display name and the role."""

    id: int
    name: str
    role: str


def reviews_of(session: Session, item_id: str) -> list[ReviewRow]:
    """Every label given on an item, oldest first."""
    return list(
        session.scalars(
            select(ReviewRow).where(ReviewRow.item_id == item_id).order_by(ReviewRow.id)
        )
    )


def _label(review: ReviewRow, who: str) -> Label:
    """A stored review as a label record (the reviewer named by ``who``)."""
    return Label(
        item_id=review.item_id,
        annotator=who or f"reviewer-{review.reviewer_id}",
        status=review.status,
        time=iso(review.created_at) or "",
        evidence=review.note,
        role="adjudicator" if review.adjudication else "annotator",
    )


def labels_of(reviews: Sequence[ReviewRow]) -> list[Label]:
    """Stored reviews as the pure resolution's labels."""
    return [_label(r, str(r.reviewer_id)) for r in reviews]


def available_items(session: Session, reviewer: Reviewer, seed: int) -> list[ReviewItem]:
    """Items this reviewer may label now: disputes they took no part in first, then open ones."""
    done = set(
        session.scalars(select(ReviewRow.item_id).where(ReviewRow.reviewer_id == reviewer.id))
    )
    disputed: list[ReviewItem] = []
    open_: list[ReviewItem] = []
    for item in session.scalars(
        select(ReviewItem).where(ReviewItem.state.in_(("open", "disputed")))
    ):
        if item.id in done:
            continue
        (disputed if item.state == "disputed" else open_).append(item)
    by_id = {i.id: i for i in disputed + open_}
    key = f"reviewer-{reviewer.id}"
    ordered = order_for_reviewer([i.id for i in disputed], seed, key)
    ordered += order_for_reviewer([i.id for i in open_], seed, key)
    return [by_id[i] for i in ordered]


def reviewed_count(session: Session, reviewer: Reviewer) -> int:
    """How many labels this reviewer has given."""
    query = select(func.count(ReviewRow.id)).where(ReviewRow.reviewer_id == reviewer.id)
    return int(session.scalar(query) or 0)


def human_verdicts_for_run(session: Session, run_id: str) -> list[judges.Verdict]:
    """Every label of the run's resolved review items, as re-scoring carries them forward."""
    return human_verdicts_for_runs(session, [run_id])[run_id]


def record_review_artifact(
    session: Session, blobs: BlobStore, item: ReviewItem, row: ReviewRow
) -> Artifact:
    """Keep one label as an immutable ``review`` artifact linked to its run (and frame)."""
    parent: int | None = None
    if row.time_s is not None:
        for frame in session.scalars(
            select(Artifact).where(Artifact.run_id == item.run_id, Artifact.kind == "frame")
        ):
            if abs(float((frame.meta or {}).get("time_s", -1.0)) - row.time_s) < 1e-6:
                parent = frame.id
                break
    doc = {
        "item_id": item.id,
        "criterion": item.criterion,
        "item_kind": item.kind,
        "status": row.status,
        "note": row.note,
        "time_s": row.time_s,
        "adjudication": row.adjudication,
        "reviewer": f"reviewer-{row.reviewer_id}",  # pseudonymous: artifacts reach submitters
        "created_at": iso(row.created_at),
    }
    data = json.dumps(doc, sort_keys=True).encode()
    new = NewArtifact(
        "review",
        data,
        "review",
        REVIEW_PROCEDURE_VERSION,
        record_name(row.id),
        parent_id=parent,
    )
    return record_artifact(session, blobs, item.run_id, new)


@dataclass(frozen=True)
class SubmitResult:
    """What a label did: the item's new state and, once resolved, the new evaluation."""

    item_id: str
    state: str
    adjudication: bool
    final_label: str | None
    evaluation_id: int | None


def submit_review(
    session: Session,
    blobs: BlobStore,
    item_id: str,
    reviewer: Reviewer,
    status: str,
    note: str = "",
    time_s: float | None = None,
) -> SubmitResult:
    """Append one label; resolve the item and append a ``review`` evaluation when decided.

    The label is also kept as a ``review`` artifact of the run (JSON, parent: the frame at
    ``time_s`` when given), which the human verdict row then points at.
    """
    if status not in REVIEW_STATUSES:
        raise InputError(f"status must be one of {', '.join(REVIEW_STATUSES)}, not {status!r}")
    found = session.get(ReviewItem, item_id)
    if found is None:
        raise NotFoundError(f"no review item {item_id!r}")
    # one label of a run at a time, locks taken run first then item (PostgreSQL): a label
    # inserts rows that reference the run, so taking the run's lock later could deadlock
    session.get(Run, found.run_id, with_for_update=True)
    item = session.get(ReviewItem, item_id, with_for_update=True, populate_existing=True)
    assert item is not None
    if item.state == "resolved":
        raise ReviewConflictError(f"item {item_id} is already resolved")
    earlier = reviews_of(session, item_id)
    if any(r.reviewer_id == reviewer.id for r in earlier):
        raise ReviewConflictError(f"you already labelled item {item_id}")
    adjudication = item.state == "disputed"
    if adjudication and reviewer.role not in ("reviewer", "admin"):
        raise PermissionDeniedError("adjudication needs the reviewer or admin role")
    row = ReviewRow(
        item_id=item_id,
        reviewer_id=reviewer.id,
        reviewer_name=reviewer.name,
        status=status,
        note=note.strip()[:4000],
        time_s=time_s,
        adjudication=adjudication,
        unblinded=reviewer.role == "admin",  # an admin can see model identities
    )
    session.add(row)
    session.flush()
    record_review_artifact(session, blobs, item, row)
    reviews = [*earlier, row]
    resolution = resolve(labels_of(reviews), item.reviews_needed)
    item.state = resolution.state
    evaluation_id: int | None = None
    if resolution.state == "resolved" and resolution.label is not None:
        item.final_label = resolution.label
        item.resolved_at = utcnow()
        evaluation = append_review_evaluation(session, blobs, item)
        item.resolved_evaluation_id = evaluation.id
        evaluation_id = evaluation.id
        # a review evaluation raises no new item: mark it scanned now, nothing is left to scan
        session.add(ReviewScan(evaluation_id=evaluation.id, run_id=item.run_id, items=0))
    session.flush()
    return SubmitResult(item_id, item.state, adjudication, item.final_label, evaluation_id)


def list_items(
    session: Session,
    state: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    hidden: Sequence[str] = (),
) -> list[ReviewItem]:
    """Items, optionally of one state (``open``, ``disputed``, ``resolved``), by opaque id.

    The id is a keyed hash (``blinding.opaque_item_id``): the order says nothing about when a
    run was submitted, so a listing cannot be lined up with submissions. Items of runs of the
    ``hidden`` task refs are left out (reserved tasks, for non-admins).
    """
    query = select(ReviewItem).order_by(ReviewItem.id)
    if hidden:
        hidden_runs = select(Run.id).where(Run.task_ref.in_(list(hidden)))
        query = query.where(ReviewItem.run_id.not_in(hidden_runs))
    if state:
        query = query.where(ReviewItem.state == state)
    if limit is not None:
        query = query.limit(limit).offset(offset)
    return list(session.scalars(query))


def agreement(session: Session) -> list[PairAgreement]:
    """Simple agreement and Cohen's kappa for every pair of reviewers with common items."""
    by_item: dict[str, list[Label]] = defaultdict(list)
    for r in session.scalars(select(ReviewRow).order_by(ReviewRow.id)):
        by_item[r.item_id].append(_label(r, r.reviewer_name))
    return pairwise_agreement(by_item)


def audit_stats(session: Session) -> list[JudgeAuditStats]:
    """Per judge profile: audited automatic passes, confirmed and overturned."""
    records = [
        AuditRecord(i.criterion, tuple(i.audited_judges), i.final_label or "")
        for i in session.scalars(
            select(ReviewItem).where(ReviewItem.kind == "audit", ReviewItem.state == "resolved")
        )
    ]
    return overturns_by_judge(records)


def review_counts(session: Session) -> dict[str, int]:
    """Number of labels per item id."""
    rows = session.execute(select(ReviewRow.item_id, func.count()).group_by(ReviewRow.item_id))
    return {item_id: int(n) for item_id, n in rows}


def task_refs(session: Session, run_ids: set[str]) -> dict[str, str]:
    """Task reference of each run (for listings; never the model)."""
    if not run_ids:
        return {}
    rows = session.execute(select(Run.id, Run.task_ref).where(Run.id.in_(run_ids))).all()
    return {rid: ref for rid, ref in rows}
