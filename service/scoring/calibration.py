"""Storing calibration runs and gate decisions, and the eligibility the jury reads from them.

``store_calibration_run`` keeps a :class:`judges.calibration.CalibrationRun` (its full JSON) and one
row per :class:`GateDecision`. ``latest_eligibility(session)`` rebuilds the jury's eligibility
mapping with ``eligibility_table`` from every stored decision (latest wins), and
:class:`StoredEligibility` is the zero-argument provider ``service.adapters.JudgesEvaluator``
calls before each evaluation (re-read at most every ``ttl_s`` seconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.calibration import CalibrationRun, GateDecision, eligibility_table
from regua.errors import NotFoundError
from regua.settings import Settings
from service.db import Database
from service.scoring.models import CalibrationRunRow, GateDecisionRow

Eligibility = Mapping[tuple[str, str, str], bool]


def store_calibration_run(
    s: Session, run: CalibrationRun, *, requested_by: int | None = None
) -> CalibrationRunRow:
    """Insert a calibration run and its gate decisions (idempotent per ``run.run_id``)."""
    row = s.get(CalibrationRunRow, run.run_id)
    if row is not None:
        return row
    row = CalibrationRunRow(
        id=run.run_id,
        profile_id=run.profile_id,
        profile_hash=run.profile_hash,
        set_id=run.set_id,
        set_hash=run.set_hash,
        task_ref=run.task_ref,
        task_family=run.task_family,
        split=run.split,
        criteria=sorted({d.criterion for d in run.decisions} | set(run.per_criterion)),
        data=run.to_dict(),
        requested_by=requested_by,
    )
    s.add(row)
    s.flush()
    store_decisions(s, run.decisions, calibration_run_id=run.run_id)
    return row


def store_decisions(
    s: Session, decisions: Iterable[GateDecision], *, calibration_run_id: str | None = None
) -> list[GateDecisionRow]:
    """Insert gate decisions (e.g. imported from another installation, or a run's decisions)."""
    rows = [
        GateDecisionRow(
            profile_id=d.profile_id,
            criterion=d.criterion,
            task_family=d.task_family,
            passed=d.passed,
            reasons=list(d.reasons),
            metrics=dict(d.metrics),
            thresholds=dict(d.thresholds),
            gate_id=d.gate_id,
            set_id=d.set_id,
            split_seed=d.split_seed,
            decided_at=d.decided_at,
            calibration_run_id=calibration_run_id or d.run_id,
        )
        for d in decisions
    ]
    s.add_all(rows)
    s.flush()
    return rows


def decision_of(row: GateDecisionRow) -> GateDecision:
    """The pure decision record of a stored row."""
    return GateDecision(
        profile_id=row.profile_id,
        criterion=row.criterion,
        task_family=row.task_family,
        passed=row.passed,
        reasons=tuple(str(r) for r in row.reasons),
        metrics=dict(row.metrics),
        thresholds=dict(row.thresholds),
        gate_id=row.gate_id,
        set_id=row.set_id,
        split_seed=row.split_seed,
        decided_at=row.decided_at,
        run_id=row.calibration_run_id,
    )


def stored_decisions(s: Session) -> list[GateDecision]:
    """Every stored decision, oldest first (insertion order breaks ties of ``decided_at``)."""
    rows = s.scalars(select(GateDecisionRow).order_by(GateDecisionRow.id)).all()
    return [decision_of(r) for r in rows]


def latest_eligibility(s: Session) -> dict[tuple[str, str, str], bool]:
    """``{(profile_id, criterion, family): passed}`` from the latest stored decision of each key;
    pass it as ``eligibility`` to ``judges.evaluate``. Empty when nothing was calibrated."""
    return eligibility_table(stored_decisions(s))


def gate_view(s: Session) -> list[dict[str, Any]]:
    """The latest decision per (profile, criterion, family), as JSON (``GET /v1/gate``)."""
    latest: dict[tuple[str, str, str], GateDecision] = {}
    for d in sorted(stored_decisions(s), key=lambda d: d.decided_at):
        latest[(d.profile_id, d.criterion, d.task_family)] = d
    return [latest[k].to_dict() for k in sorted(latest)]


def calibration_view(s: Session, run_id: str) -> dict[str, Any]:
    """A stored run with its decisions (``GET /v1/calibrations/{id}``); 404 when unknown."""
    row = s.get(CalibrationRunRow, run_id)
    if row is None:
        raise NotFoundError(f"no calibration run {run_id!r}")
    decisions = s.scalars(
        select(GateDecisionRow)
        .where(GateDecisionRow.calibration_run_id == run_id)
        .order_by(GateDecisionRow.id)
    ).all()
    return {
        "id": row.id,
        "profile_id": row.profile_id,
        "set_id": row.set_id,
        "task_ref": row.task_ref,
        "criteria": list(row.criteria),
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "decisions": [decision_of(d).to_dict() for d in decisions],
        "run": row.data,
    }


def list_calibrations(s: Session, limit: int = 100) -> list[dict[str, Any]]:
    """The newest stored runs (summary lines)."""
    rows = s.scalars(
        select(CalibrationRunRow).order_by(CalibrationRunRow.created_at.desc()).limit(limit)
    ).all()
    return [
        {
            "id": r.id,
            "profile_id": r.profile_id,
            "set_id": r.set_id,
            "criteria": list(r.criteria),
            "created_at": r.created_at.isoformat() if r.created_at else None,
        }
        for r in rows
    ]


class StoredEligibility:
    """Zero-argument eligibility provider over the database (cached for ``ttl_s`` seconds)."""

    def __init__(self, db: Database, ttl_s: float = 5.0) -> None:
        self.db = db
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._value: dict[tuple[str, str, str], bool] = {}
        self._at = float("-inf")

    def __call__(self) -> dict[tuple[str, str, str], bool]:
        """The latest eligibility table (re-read when older than ``ttl_s``)."""
        with self._lock:
            if time.monotonic() - self._at >= self.ttl_s:
                with self.db.read() as s:
                    self._value = latest_eligibility(s)
                self._at = time.monotonic()
            return dict(self._value)

    def refresh(self) -> None:
        """Forget the cached table (after a new calibration was stored)."""
        with self._lock:
            self._at = float("-inf")


_PROVIDERS: dict[str, StoredEligibility] = {}
_PROVIDERS_LOCK = threading.Lock()


def eligibility_provider(database_url: str) -> StoredEligibility:
    """The shared provider of one database URL (opens the database once per process)."""
    with _PROVIDERS_LOCK:
        provider = _PROVIDERS.get(database_url)
        if provider is None:
            provider = StoredEligibility(Database(database_url))
            _PROVIDERS[database_url] = provider
        return provider


def invalidate(database_url: str) -> None:
    """Make the shared provider of ``database_url`` re-read the gate on its next call."""
    with _PROVIDERS_LOCK:
        provider = _PROVIDERS.get(database_url)
    if provider is not None:
        provider.refresh()


def stored_eligibility(settings: Settings) -> StoredEligibility:
    """The provider for the database ``settings`` point at (``production_components`` uses it)."""
    return eligibility_provider(settings.resolved_database_url())
