"""SQLAlchemy 2 typed models: the system of record of every run.

Evidence tables are append-only: artifacts, check results, render records, evaluations, verdicts,
judge failures and criterion outcomes are only ever inserted. A new judgement of a run (re-scoring,
a review) is a new :class:`Evaluation` whose ``supersedes_id`` points at the one it replaces; the
older rows stay readable. ``runs`` and ``stage_records`` carry mutable *progress* state (queue
status, lease, the pointer to the current outcome), never evidence.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from service.storage.columns import TYPE_MAP, Created, CriterionKey, IntPk, RunRef, StageKey
from service.storage.columns import (
    utcnow as utcnow,  # re-exported: the service imports it from here
)

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def iso(value: datetime | None) -> str | None:
    """ISO-8601 UTC text (naive values from SQLite are UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class Base(DeclarativeBase):
    """Declarative base with stable constraint names (Alembic-friendly)."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = TYPE_MAP


class TaskRow(Base):
    """A frozen task version as it was first seen by this service."""

    __tablename__ = "tasks"
    id: Mapped[IntPk]
    ref: Mapped[str] = mapped_column(String(200), unique=True)
    task_id: Mapped[str] = mapped_column(String(200))
    version: Mapped[int]
    content_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[Created]


class ApiToken(Base):
    """A bearer token; only a keyed hash of it is stored (``service.access.tokens``).

    ``hash_scheme`` is ``hmac-sha256`` (keyed with the installation secret) or ``sha256`` for a
    row written before migration ``0400_access_sessions``, re-hashed on its first use.
    """

    __tablename__ = "api_tokens"
    id: Mapped[IntPk]
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[Created]
    hash_scheme: Mapped[str] = mapped_column(
        String(16), default="hmac-sha256", server_default="sha256"
    )
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class Run(Base):
    """One submitted model output for one task version, followed end to end."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    task_ref: Mapped[str] = mapped_column(String(200), index=True)
    task_pk: Mapped[int] = mapped_column(ForeignKey("tasks.id"))
    model_label: Mapped[str] = mapped_column(String(200), index=True)
    model_provider: Mapped[str | None] = mapped_column(String(200))
    model_params: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    submitted_at: Mapped[Created]
    submitted_by: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id"), index=True)
    batch_id: Mapped[str | None] = mapped_column(String(32))
    raw_artifact_id: Mapped[int | None]
    panel_id: Mapped[str | None] = mapped_column(String(200))  # asked for at submission
    # progress (mutable)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    outcome: Mapped[str | None] = mapped_column(String(16))
    outcome_cause: Mapped[str | None] = mapped_column(Text)
    current_evaluation_id: Mapped[int | None]
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_expires_at: Mapped[datetime | None]
    claims: Mapped[int] = mapped_column(default=0)
    finished_at: Mapped[datetime | None]
    # scheduling: set by the check stage (NULL before: an unchecked run waits in the cheap lane)
    lane: Mapped[str | None] = mapped_column(String(8))
    render_cost: Mapped[float | None]
    claimed_at: Mapped[datetime | None]

    __table_args__ = (
        Index("ix_runs_status_submitted", "status", "submitted_at"),
        Index("ix_runs_status_lane", "status", "lane", "submitted_by"),
        Index("ix_runs_submitter_claimed", "submitted_by", "claimed_at"),
    )


class Artifact(Base):
    """A content-addressed blob linked to its run, its parent and the procedure that made it."""

    __tablename__ = "artifacts"
    id: Mapped[IntPk]
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(200), default="")
    media_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int]
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    procedure_id: Mapped[str] = mapped_column(String(100))
    procedure_version: Mapped[str] = mapped_column(String(100))
    meta: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[Created]

    __table_args__ = (
        UniqueConstraint("run_id", "kind", "name", "sha256", name="uq_artifacts_key"),
    )


class StageRecord(StageKey, Base):
    """A finished pipeline stage of a run: the idempotence key is (run, stage, version)."""

    __tablename__ = "stage_records"
    status: Mapped[str] = mapped_column(String(16))  # done | skipped | incomplete
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attempts: Mapped[int] = mapped_column(default=1)
    started_at: Mapped[Created]
    finished_at: Mapped[Created]

    __table_args__ = (UniqueConstraint("run_id", "stage", "version", name="uq_stage_key"),)


class StageAttempt(StageKey, Base):
    """A stage attempt that raised (machinery trouble); counted to give up with a cause."""

    __tablename__ = "stage_attempts"
    error: Mapped[str] = mapped_column(Text)
    created_at: Mapped[Created]


class CheckResultRow(Base):
    """One static check result (or the extraction summary, ``check_id`` = ``extract``)."""

    __tablename__ = "check_results"
    id: Mapped[IntPk]
    run_id: Mapped[RunRef]
    report_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    check_id: Mapped[str] = mapped_column(String(100))
    version: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(20))
    evidence: Mapped[list[Any]] = mapped_column(JSON)


class RenderRecord(Base):
    """One sandboxed render of a run's extracted SVG (or why it did not finish)."""

    __tablename__ = "render_records"
    id: Mapped[IntPk]
    run_id: Mapped[RunRef]
    status: Mapped[str] = mapped_column(String(16))  # ok | incomplete | over_budget
    cause: Mapped[str | None] = mapped_column(String(100))
    detail: Mapped[str | None] = mapped_column(Text)
    render_profile_id: Mapped[str] = mapped_column(String(100))
    browser_version: Mapped[str | None] = mapped_column(String(100))
    sandbox: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attempts: Mapped[int] = mapped_column(default=1)
    elapsed_ms: Mapped[float | None]
    """Wall time of the render on its worker (the wait for a free worker not included)."""
    cpu_ms: Mapped[float | None]
    """CPU time of the sandbox's process tree during the render (the budget's measure)."""
    queue_wait_ms: Mapped[float | None]
    """How long the render waited for a free worker before it started."""
    log_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    created_at: Mapped[Created]


class Evaluation(Base):
    """One judgement of a run (append-only), with the versions of everything it used."""

    __tablename__ = "evaluations"
    id: Mapped[IntPk]
    run_id: Mapped[RunRef]
    kind: Mapped[str] = mapped_column(String(20))  # initial | rescore | review
    supersedes_id: Mapped[int | None] = mapped_column(ForeignKey("evaluations.id"))
    task_ref: Mapped[str] = mapped_column(String(200))
    rubric_hash: Mapped[str] = mapped_column(String(64))
    checker_version: Mapped[str] = mapped_column(String(200))
    render_profile_id: Mapped[str | None] = mapped_column(String(100))
    render_record_id: Mapped[int | None] = mapped_column(ForeignKey("render_records.id"))
    judge_panel: Mapped[dict[str, Any]] = mapped_column(JSON)
    outcome: Mapped[str] = mapped_column(String(16))
    cause: Mapped[str | None] = mapped_column(Text)
    reasons: Mapped[list[Any]] = mapped_column(JSON)
    created_at: Mapped[Created]


class VerdictRow(CriterionKey, Base):
    """One judge's verdict on one criterion inside an evaluation."""

    __tablename__ = "verdicts"
    judge_profile_id: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    evidence: Mapped[list[Any]] = mapped_column(JSON)
    raw_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    latency_ms: Mapped[float | None]
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    cost_usd: Mapped[float | None]
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    level: Mapped[int | None]  # graded criteria (1400)


class JudgeFailureRow(CriterionKey, Base):
    """A judge that could not give a verdict (machinery, not a verdict)."""

    __tablename__ = "judge_failures"
    judge_profile_id: Mapped[str] = mapped_column(String(200))
    cause: Mapped[str] = mapped_column(String(100))
    detail: Mapped[str] = mapped_column(Text)


class CriterionOutcomeRow(CriterionKey, Base):
    """The jury's result for one criterion inside an evaluation."""

    __tablename__ = "criterion_outcomes"
    kind: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))
    review_required: Mapped[bool] = mapped_column(default=False)
    review_reason: Mapped[str | None] = mapped_column(Text)
    votes: Mapped[list[Any] | None] = mapped_column(JSON)
    disagreement: Mapped[str | None] = mapped_column(Text)
    cause: Mapped[str | None] = mapped_column(Text)
    level: Mapped[int | None]  # graded criteria (1400)
