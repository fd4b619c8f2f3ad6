"""The run view's graded and adjudicated parts: adjudications per criterion, the rubric score.

Built from the ``adjudications`` and ``rubric_scores`` rows of one evaluation
(:mod:`service.evaluation.record_grading`) into the read models of
:mod:`regua.views.runs`; the API's run JSON and the run page show the same.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from judges.adjudication_record import ADJUDICATION_RESULTS
from judges.model import CRITERION_STATUSES, OutcomeStatus
from regua.views.runs import AdjudicationView, AnswerView, BoundView, EvidenceView, RubricView
from service.evaluation.record_grading import adjudication_rows, read_rubric
from service.storage import AdjudicationRow

OUTCOMES: dict[str, OutcomeStatus] = {
    "pass": "pass",
    "fail": "fail",
    "pending": "pending",
    "incomplete": "incomplete",
}


def _adjudication_view(row: AdjudicationRow, shas: Mapping[int, str]) -> AdjudicationView:
    failure = (
        None if row.failure_cause is None else f"{row.failure_cause}: {row.failure_detail or ''}"
    )
    return AdjudicationView.of(
        row,
        answers=[
            AnswerView(
                status=str(a.get("status")),
                level=a.get("level"),
                evidence=str(a.get("evidence") or ""),
                time_s=a.get("time_s"),
            )
            for a in row.answers or []
            if isinstance(a, dict)
        ],
        result=ADJUDICATION_RESULTS[row.result],
        decided=row.result == "decided",
        status=CRITERION_STATUSES.get(row.status or ""),
        evidence=[
            EvidenceView(
                artifact_ref=e.get("artifact_ref"),
                time_s=e.get("time_s"),
                description=str(e.get("description") or ""),
            )
            for e in row.evidence or []
            if isinstance(e, dict)
        ],
        failure=failure,
        prompt_artifact=shas.get(row.prompt_artifact_id or -1),
        raw_artifact=shas.get(row.raw_artifact_id or -1),
    )


def adjudication_views(
    s: Session, evaluation_id: int, shas: Mapping[int, str]
) -> dict[str, AdjudicationView]:
    """Criterion → the adjudication asked on it in this evaluation (``shas``: artifact id → sha)."""
    return {r.criterion: _adjudication_view(r, shas) for r in adjudication_rows(s, evaluation_id)}


def rubric_view(s: Session, evaluation_id: int) -> RubricView | None:
    """The rubric score of one evaluation (None: its task declares no rubric)."""
    row = read_rubric(s, evaluation_id)
    if row is None:
        return None
    return RubricView.of(
        row,
        levels={str(k): None if v is None else int(v) for k, v in (row.levels or {}).items()},
        bounds=[
            BoundView(
                criterion=str(b["criterion"]),
                text=str(b["text"]),
                level=b.get("level"),
                held=b.get("held"),
            )
            for b in row.bounds or []
            if isinstance(b, dict)
        ],
        missing=[str(m) for m in row.missing or []],
        verdict=OUTCOMES[row.verdict],
    )
