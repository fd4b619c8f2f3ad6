"""Appending a ``review`` evaluation once an item is resolved (nothing earlier is overwritten).

The new evaluation copies the run's current one (verdicts, judge failures, criterion outcomes),
adds the people's verdicts as ``human`` verdict rows, lets the human label decide the reviewed
criterion (via :func:`judges.jury.decide_criterion`) and re-computes the outcome with
:func:`judges.jury.decide_outcome`. ``runs.current_evaluation_id`` and ``runs.outcome`` then point
at the new evaluation, whose ``supersedes_id`` names the previous one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.human import HUMAN_PROFILE_ID, human_verdict
from judges.jury import decide_criterion, decide_outcome
from judges.model import CriterionOutcome, Evidence, Verdict, VerdictStatus
from regua.errors import NotFoundError
from service.db.models import (
    Artifact,
    CriterionOutcomeRow,
    Evaluation,
    JudgeFailureRow,
    Run,
    TaskRow,
    VerdictRow,
)
from service.review.models import ReviewItem, ReviewRow
from tasks import Criterion, CriterionKind, TaskSpec

HUMAN_PROFILE = HUMAN_PROFILE_ID
"""Every review is recorded under the built-in ``human@1`` profile (kind ``human``)."""


def _criterion(session: Session, task_ref: str, criterion_id: str, kind: str) -> Criterion:
    row = session.scalar(select(TaskRow).where(TaskRow.ref == task_ref))
    if row is not None:
        try:
            return TaskSpec.model_validate(row.spec).criterion(criterion_id)
        except (KeyError, ValueError):
            pass
    return Criterion(id=criterion_id, kind=CriterionKind(kind), question="")


def _review_verdict(review: ReviewRow, frame_ref: str | None) -> Verdict:
    note = review.note.strip() or "(no note)"
    role = "adjudication" if review.adjudication else "review"
    text = f"{role}: {note}"  # who reviewed stays in the review record, not in the evidence
    return human_verdict("", review.status, text, artifact_ref=frame_ref, time_s=review.time_s)


def _row_outcome(row: CriterionOutcomeRow) -> CriterionOutcome:
    """The stored criterion outcome as the jury's type (votes are not needed to decide)."""
    status: Any = row.status
    return CriterionOutcome(
        row.criterion,
        row.kind,
        status,
        row.review_required,
        row.review_reason,
        disagreement=row.disagreement,
        cause=row.cause,
    )


def append_review_evaluation(
    session: Session,
    item: ReviewItem,
    label: str,
    reviews: Sequence[ReviewRow],
) -> Evaluation:
    """Write a new evaluation of ``item``'s run in which people decide ``item.criterion``."""
    run = session.get(Run, item.run_id, with_for_update=True)  # one new evaluation at a time
    if run is None or run.current_evaluation_id is None:
        raise NotFoundError(f"run {item.run_id} has no evaluation to build on")
    prev = session.get(Evaluation, run.current_evaluation_id)
    if prev is None:
        raise NotFoundError(f"evaluation {run.current_evaluation_id} is missing")
    refs = {
        round(float((a.meta or {}).get("time_s", -1.0)), 3): a.sha256
        for a in session.scalars(
            select(Artifact).where(Artifact.run_id == run.id, Artifact.kind == "frame")
        )
    }
    new = Evaluation(
        run_id=run.id,
        kind="review",
        supersedes_id=prev.id,
        task_ref=prev.task_ref,
        rubric_hash=prev.rubric_hash,
        checker_version=prev.checker_version,
        render_profile_id=prev.render_profile_id,
        render_record_id=prev.render_record_id,
        judge_panel={**dict(prev.judge_panel or {}), "human": [HUMAN_PROFILE]},
        outcome="pending",
        cause=None,
        reasons=[],
    )
    session.add(new)
    session.flush()
    for v in session.scalars(select(VerdictRow).where(VerdictRow.evaluation_id == prev.id)):
        session.add(
            VerdictRow(
                evaluation_id=new.id,
                criterion=v.criterion,
                judge_profile_id=v.judge_profile_id,
                status=v.status,
                evidence=v.evidence,
                raw_artifact_id=v.raw_artifact_id,
                latency_ms=v.latency_ms,
                usage=v.usage,
                cost_usd=v.cost_usd,
                details=v.details,
            )
        )
    for f in session.scalars(
        select(JudgeFailureRow).where(JudgeFailureRow.evaluation_id == prev.id)
    ):
        session.add(
            JudgeFailureRow(
                evaluation_id=new.id,
                criterion=f.criterion,
                judge_profile_id=f.judge_profile_id,
                cause=f.cause,
                detail=f.detail,
            )
        )
    review_artifacts = {
        a.name: a
        for a in session.scalars(
            select(Artifact).where(Artifact.run_id == run.id, Artifact.kind == "review")
        )
    }
    for r in reviews:
        frame = refs.get(round(r.time_s, 3)) if r.time_s is not None else None
        verdict = _review_verdict(r, frame)
        kept = review_artifacts.get(f"review-{r.id}.json")
        session.add(
            VerdictRow(
                evaluation_id=new.id,
                criterion=item.criterion,
                judge_profile_id=verdict.judge_profile_id,
                status=verdict.status.value,
                evidence=[verdict.evidence.to_dict()],
                raw_artifact_id=kept.id if kept is not None else None,
                latency_ms=None,
                usage=None,
                cost_usd=None,
            )
        )
    rows = list(
        session.scalars(
            select(CriterionOutcomeRow)
            .where(CriterionOutcomeRow.evaluation_id == prev.id)
            .order_by(CriterionOutcomeRow.id)
        )
    )
    outcomes: list[CriterionOutcome] = []
    stored_votes: dict[str, Any] = {}
    decided = False
    for row in rows:
        if row.criterion == item.criterion:
            criterion = _criterion(session, prev.task_ref, row.criterion, row.kind)
            deciding = Verdict(
                criterion=item.criterion,
                status=VerdictStatus(label),
                evidence=Evidence(None, None, "label resolved by review"),
                judge_profile_id=HUMAN_PROFILE,
            )
            outcomes.append(
                decide_criterion(criterion, [], [], lambda _pid: True, humans=[deciding])
            )
            decided = True
        else:
            outcomes.append(_row_outcome(row))
            stored_votes[row.criterion] = row.votes
    if not decided:
        raise NotFoundError(f"criterion {item.criterion} is not in evaluation {prev.id}")
    for co in outcomes:
        session.add(
            CriterionOutcomeRow(
                evaluation_id=new.id,
                criterion=co.criterion,
                kind=co.kind,
                status=co.status,
                review_required=co.review_required,
                review_reason=co.review_reason,
                votes=stored_votes.get(co.criterion, [v.to_dict() for v in co.votes]),
                disagreement=co.disagreement,
                cause=co.cause,
            )
        )
    outcome = decide_outcome(outcomes)
    status, cause = outcome.status, outcome.cause
    if prev.outcome == "incomplete" and status != "fail":
        status, cause = "incomplete", prev.cause  # people do not paper over a machinery failure
    new.outcome = status
    new.cause = cause
    new.reasons = [*outcome.reasons, f"{item.criterion}: human review set {label}"]
    run.current_evaluation_id = new.id
    run.outcome = status
    run.outcome_cause = cause
    session.flush()
    return new
