"""Generations: the model call behind a run that regua generated (migration ``0600_generations``).

One row per generated run, written in the transaction that stores the run: which API and model,
which repeat, tokens, latency, attempts, the finish reason, the cost (from a versioned price
table, else NULL), whether it timed out, the exact request parameters, the prompt's sha256, the
cause when the provider gave no reply, and whether the mock answered. ``case_key`` (unique when
set) lets an experiment resume without generating a case twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, utcnow
from service.storage.models import Base


class GenerationRow(Base):
    """The model call that produced one run's raw reply."""

    __tablename__ = "generations"
    id: Mapped[IntPk]
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), unique=True)
    api: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    repeat: Mapped[int]
    input_tokens: Mapped[int | None]
    output_tokens: Mapped[int | None]
    latency_ms: Mapped[float | None]
    elapsed_ms: Mapped[float | None]
    finish_reason: Mapped[str | None] = mapped_column(String(64))
    attempts: Mapped[int]
    cost_usd: Mapped[float | None]
    price_table_version: Mapped[str | None] = mapped_column(String(100))
    timed_out: Mapped[bool] = mapped_column(default=False)
    refusal: Mapped[bool] = mapped_column(default=False)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    cause: Mapped[str | None] = mapped_column(Text)
    mock: Mapped[bool] = mapped_column(default=False)
    case_key: Mapped[str | None] = mapped_column(String(200), unique=True)
    created_at: Mapped[Created]


class GenerationJobRow(Base):
    """One generation job (``POST /v1/generations``): its request, state and progress.

    Stored so that any process can report it and any worker can run or resume it (migration
    ``1510_generation_jobs``); its repeats are stored under case keys ``JOB:REPEAT``, so a
    resumed job never calls the model again for a repeat already stored.
    """

    __tablename__ = "generation_jobs"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task: Mapped[str] = mapped_column(String(200))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    repeats: Mapped[int]
    revise: Mapped[int] = mapped_column(default=0)
    revise_findings: Mapped[bool] = mapped_column(default=False)
    token_id: Mapped[int | None] = mapped_column(index=True)
    state: Mapped[str] = mapped_column(String(16), default="running", index=True)
    done: Mapped[int] = mapped_column(default=0)
    rounds_done: Mapped[int] = mapped_column(default=0)
    run_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    chains: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[Created]
    updated_at: Mapped[Created]


class ModelCallRow(Base):
    """One send of one generation model call, recorded before it is sent (``1520_model_calls``).

    ``round`` 0 is a case's first answer, ``k`` its k-th revision round; ``attempt`` counts the
    sends of that call (2 and more: sent again after the process that sent it died, with the
    same ``Idempotency-Key``); ``done_at`` and ``run_id`` are set in the transaction that stores
    the answer's run.
    """

    __tablename__ = "model_calls"
    __table_args__ = (UniqueConstraint("idempotency_key", "attempt", name="uq_model_calls_send"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job: Mapped[str] = mapped_column(String(200), index=True)
    case_key: Mapped[str] = mapped_column(String(200))
    round: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str] = mapped_column(String(80))
    sent_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    run_id: Mapped[str | None] = mapped_column(String(32))
