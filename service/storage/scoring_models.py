"""Tables of calibration storage and re-scoring (created by migration ``0200_calibration``).

All four tables are append-only evidence: a calibration run and its gate decisions are stored
once and never changed (the jury reads the *latest* decision per profile, criterion and family);
a re-scoring batch and its items record which new evaluation replaced which older one. The older
evaluation stays readable; it is superseded because a newer one names it in ``supersedes_id``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, RunRef
from service.storage.models import Base


class CalibrationRunRow(Base):
    """One calibration run (``CalibrationRun.to_dict()`` as JSON) of a judge profile on a set."""

    __tablename__ = "calibration_runs"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # CalibrationRun.run_id
    profile_id: Mapped[str] = mapped_column(String(200), index=True)
    profile_hash: Mapped[str | None] = mapped_column(String(64))
    set_id: Mapped[str] = mapped_column(String(200))
    set_hash: Mapped[str] = mapped_column(String(64))
    task_ref: Mapped[str] = mapped_column(String(200))
    task_family: Mapped[str] = mapped_column(String(200))
    split: Mapped[str] = mapped_column(String(20))
    criteria: Mapped[list[Any]] = mapped_column(JSON)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    requested_by: Mapped[int | None]
    created_at: Mapped[Created]


class GateDecisionRow(Base):
    """One gate decision: may ``profile_id`` vote on ``criterion`` for ``task_family``?"""

    __tablename__ = "gate_decisions"
    id: Mapped[IntPk]
    profile_id: Mapped[str] = mapped_column(String(200), index=True)
    profile_hash: Mapped[str | None] = mapped_column(String(64))
    criterion: Mapped[str] = mapped_column(String(50))
    task_family: Mapped[str] = mapped_column(String(200))
    passed: Mapped[bool]
    status: Mapped[str | None] = mapped_column(String(16))  # trusted|not_trusted|inconclusive
    needs: Mapped[list[Any] | None] = mapped_column(JSON)  # labels that would decide it
    reasons: Mapped[list[Any]] = mapped_column(JSON)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON)
    thresholds: Mapped[dict[str, Any]] = mapped_column(JSON)
    gate_id: Mapped[str] = mapped_column(String(200))
    set_id: Mapped[str] = mapped_column(String(200))
    split_seed: Mapped[int | None]
    set_size: Mapped[int | None]  # labelled items it was measured on
    decided_at: Mapped[str] = mapped_column(String(64))  # ISO time of the decision
    calibration_run_id: Mapped[str | None] = mapped_column(
        ForeignKey("calibration_runs.id"), index=True
    )
    created_at: Mapped[Created]


class RescoreBatch(Base):
    """One re-scoring request: which runs were re-judged with which panel, and what happened."""

    __tablename__ = "rescore_batches"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_ref: Mapped[str] = mapped_column(String(200))
    panel_id: Mapped[str] = mapped_column(String(200))
    panel: Mapped[dict[str, Any]] = mapped_column(JSON)
    requested_by: Mapped[int | None]
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[Created]


class RescoreItem(Base):
    """One run of a batch: the evaluation appended and the one it superseded."""

    __tablename__ = "rescore_items"
    id: Mapped[IntPk]
    batch_id: Mapped[str] = mapped_column(ForeignKey("rescore_batches.id"), index=True)
    run_id: Mapped[RunRef]
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"))
    previous_evaluation_id: Mapped[int | None] = mapped_column(ForeignKey("evaluations.id"))
    rerendered: Mapped[bool] = mapped_column(default=False)
