"""Tables of experiments (created by migration ``0610_experiments``).

``experiments`` holds one row per experiment run (the file's id and a time window): the file as
declared, its resolved plan and its progress. ``experiment_cases`` is append-only: one row per
(arm, item, repeat) once its generation exists, keyed by the case key the generator was given,
with the run it produced and what the generation measured.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, RunRef
from service.storage.models import Base


class ExperimentRow(Base):
    """One experiment run: ``NAME@WINDOW``."""

    __tablename__ = "experiments"
    id: Mapped[str] = mapped_column(String(250), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    window: Mapped[str] = mapped_column(String(100))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    spec_hash: Mapped[str] = mapped_column(String(64))
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), default="created")
    error: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id"))
    created_at: Mapped[Created]
    finished_at: Mapped[datetime | None]


class ExperimentCaseRow(Base):
    """One generated case of an experiment and the run it produced."""

    __tablename__ = "experiment_cases"
    id: Mapped[IntPk]
    experiment_id: Mapped[str] = mapped_column(ForeignKey("experiments.id"), index=True)
    case_key: Mapped[str] = mapped_column(String(500), unique=True)
    arm: Mapped[str] = mapped_column(String(100))
    item: Mapped[str] = mapped_column(String(200))
    repeat: Mapped[int]
    task_ref: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[RunRef]
    prompt_sha256: Mapped[str | None] = mapped_column(String(64))
    latency_ms: Mapped[float | None]
    cost_usd: Mapped[float | None]
    input_tokens: Mapped[int | None]
    output_tokens: Mapped[int | None]
    timed_out: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[Created]
