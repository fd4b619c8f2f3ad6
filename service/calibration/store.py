"""Storing calibration runs with their gate decisions, and reading them back for the API.

:func:`store_calibration_run` keeps a :class:`judges.calibration.CalibrationRun` (its full JSON)
and one gate decision row per criterion (:func:`service.evaluation.gate.store_decisions`, which
is what the jury reads). The views are what ``/v1/calibrations`` and ``/v1/gate`` answer.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.calibration import CalibrationRun, GateDecision
from regua.errors import NotFoundError
from regua.records import field_dict
from regua.views.calibrations import CalibrationSummary, CalibrationView, GateDecisionView
from service.calibration.guard import guarded
from service.evaluation.gate import (
    decision_of,
    latest_decisions,
    store_decisions,
    stored_decisions,
)
from service.storage import CalibrationRunRow, GateDecisionRow

_RUN_FIELDS = (
    "profile_id",
    "profile_hash",
    "set_id",
    "set_hash",
    "task_ref",
    "task_family",
    "split",
)
"""The columns of a stored calibration run copied from the run as they are."""


def gate_decision_view(decision: GateDecision) -> GateDecisionView:
    """The view of a decision (metrics and thresholds included)."""
    return GateDecisionView.model_validate(decision.to_dict())


def store_calibration_run(
    s: Session, run: CalibrationRun, *, requested_by: int | None = None, replace: bool = False
) -> CalibrationRunRow:
    """Insert a calibration run and its gate decisions (idempotent per ``run.run_id``).

    A run that would demote a trusted judge on a smaller set is refused
    (:class:`~regua.errors.GateDemotionError`, nothing stored) unless ``replace``
    (:mod:`service.calibration.guard`).
    """
    row = s.get(CalibrationRunRow, run.run_id)
    if row is not None:
        return row
    run = guarded(s, run, replace=replace)
    row = CalibrationRunRow(
        **field_dict(run, *_RUN_FIELDS),
        id=run.run_id,
        criteria=sorted({d.criterion for d in run.decisions} | set(run.per_criterion)),
        data=run.to_dict(),
        requested_by=requested_by,
    )
    s.add(row)
    s.flush()
    store_decisions(s, run.decisions, calibration_run_id=run.run_id)
    return row


def gate_view(s: Session) -> list[GateDecisionView]:
    """The latest decision per (profile, criterion, family) (``GET /v1/gate``)."""
    latest = latest_decisions(s)
    return [gate_decision_view(latest[k]) for k in sorted(latest)]


def judge_matches(profile_id: str, judge: str) -> bool:
    """Whether a decision's judge id is ``judge``, or ``judge`` completed from settings.

    ``vision-llm-openai@1`` matches ``vision-llm-openai+MODEL@1``.
    """
    if profile_id == judge:
        return True
    name, _, version = judge.partition("@")
    mine, _, my_version = profile_id.partition("@")
    return "+" not in name and my_version == version and mine.startswith(name + "+")


def gate_history(
    s: Session, judge: str | None = None, family: str | None = None
) -> list[GateDecisionView]:
    """Every stored decision, oldest first within each judge, family and criterion.

    What ``GET /v1/gate?history=true`` and ``regua gate history`` show.
    """
    found = [
        d
        for d in stored_decisions(s)
        if (judge is None or judge_matches(d.profile_id, judge))
        and (family is None or d.task_family == family)
    ]
    found.sort(key=lambda d: (d.profile_id, d.task_family, d.criterion, d.decided_at))
    return [gate_decision_view(d) for d in found]


def _summary(row: CalibrationRunRow) -> dict[str, object]:
    return {
        **field_dict(row, "id", "profile_id", "profile_hash", "set_id"),
        "criteria": list(row.criteria),
        "created_at": row.created_at.isoformat() if row.created_at else None,
    }


def calibration_view(s: Session, run_id: str) -> CalibrationView:
    """A stored run with its decisions (``GET /v1/calibrations/{id}``); 404 when unknown."""
    row = s.get(CalibrationRunRow, run_id)
    if row is None:
        raise NotFoundError(f"no calibration run {run_id!r}")
    decisions = s.scalars(
        select(GateDecisionRow)
        .where(GateDecisionRow.calibration_run_id == run_id)
        .order_by(GateDecisionRow.id)
    ).all()
    return CalibrationView.model_validate(
        {
            **_summary(row),
            "task_ref": row.task_ref,
            "decisions": [gate_decision_view(decision_of(d)) for d in decisions],
            "run": row.data,
        }
    )


def list_calibrations(s: Session, limit: int = 100) -> list[CalibrationSummary]:
    """The newest stored runs (summary lines)."""
    rows = s.scalars(
        select(CalibrationRunRow).order_by(CalibrationRunRow.created_at.desc()).limit(limit)
    ).all()
    return [CalibrationSummary.model_validate(_summary(r)) for r in rows]
