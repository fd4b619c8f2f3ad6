"""The people's verdicts on a run: every label of its resolved review items, as ``human@1``.

Review writes the labels (``service.review``); evaluation reads them here, so the first
evaluation after a review and every later re-score carry them forward. Each label becomes one
verdict whose evidence points at the frame the reviewer named (if any) and whose details link
the stored ``review`` artifact; :func:`judges.jury.decide_criterion` lets an adjudication win,
and otherwise the (agreeing) labels decide their criterion.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import JsonValue
from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from judges.jury import ADJUDICATION
from service.evaluation.record import RECORD_KEY
from service.storage import Artifact, ReviewItem, ReviewRow

ADJUDICATION_KEY = ADJUDICATION


def _frames(s: Session, run_ids: Sequence[str]) -> dict[tuple[str, float], str]:
    """``(run, time_s rounded to ms)`` → sha256 of the frame."""
    out: dict[tuple[str, float], str] = {}
    rows = s.execute(
        select(Artifact.run_id, Artifact.meta, Artifact.sha256).where(
            Artifact.run_id.in_(list(run_ids)), Artifact.kind == "frame"
        )
    )
    for run_id, meta, sha in rows:
        t = (meta or {}).get("time_s")
        if run_id is not None and isinstance(t, int | float):
            out[(run_id, round(float(t), 3))] = sha
    return out


def _records(s: Session, run_ids: Sequence[str]) -> dict[tuple[str, str], str]:
    """``(run, artifact name)`` → sha256 of the stored review records."""
    rows = s.execute(
        select(Artifact.run_id, Artifact.name, Artifact.sha256).where(
            Artifact.run_id.in_(list(run_ids)), Artifact.kind == "review"
        )
    )
    return {(str(run), name): sha for run, name, sha in rows}


def record_name(review_id: int) -> str:
    """The artifact name a label is kept under."""
    return f"review-{review_id}.json"


def label_verdict(
    item: ReviewItem, review: ReviewRow, frame_ref: str | None, record_sha: str | None
) -> judges.Verdict:
    """One label as a ``human@1`` verdict (the reviewer's identity stays in the review row)."""
    note = review.note.strip() or "(no note)"
    role = "adjudication" if review.adjudication else "review"
    details: dict[str, JsonValue] = {"item_id": item.id, ADJUDICATION_KEY: review.adjudication}
    if record_sha is not None:
        details[RECORD_KEY] = record_sha
    verdict = judges.human_verdict(
        item.criterion,
        review.status,
        f"{role}: {note}",
        artifact_ref=frame_ref,
        time_s=review.time_s,
    )
    return judges.Verdict(
        verdict.criterion,
        verdict.status,
        verdict.evidence,
        verdict.judge_profile_id,
        details=details,
    )


def human_verdicts_for_runs(
    s: Session, run_ids: Sequence[str], *, also: Sequence[str] = ()
) -> dict[str, list[judges.Verdict]]:
    """Every label of every resolved review item of these runs, oldest first, per run.

    The items named in ``also`` count as resolved too: they are resolved in this very
    transaction.
    """
    out: dict[str, list[judges.Verdict]] = {r: [] for r in run_ids}
    if not run_ids:
        return out
    items = {
        i.id: i
        for i in s.scalars(
            select(ReviewItem).where(
                ReviewItem.run_id.in_(list(run_ids)),
                (ReviewItem.state == "resolved") | ReviewItem.id.in_(list(also)),
            )
        )
    }
    if not items:
        return out
    frames, records = _frames(s, run_ids), _records(s, run_ids)
    by_item: dict[str, list[ReviewRow]] = defaultdict(list)
    for review in s.scalars(
        select(ReviewRow).where(ReviewRow.item_id.in_(list(items))).order_by(ReviewRow.id)
    ):
        by_item[review.item_id].append(review)
    for item_id in sorted(items, key=lambda i: min((r.id for r in by_item[i]), default=0)):
        item = items[item_id]
        for review in by_item[item_id]:
            t = review.time_s
            frame = frames.get((item.run_id, round(t, 3))) if t is not None else None
            record = records.get((item.run_id, record_name(review.id)))
            out[item.run_id].append(label_verdict(item, review, frame, record))
    return out
