"""Rows of the evaluation workflows: render-and-revise links, task proposals and decisions.

All append-only: a revision link is written with its run and never changed; a proposal is
written once and decided once, by a row of its own (an accepted proposal is a registered
task version, which nothing takes back).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, RunRef
from service.storage.models import Base


class RunRevisionRow(Base):
    """A run that answers feedback on an earlier run of the same chain (migration 1500).

    ``round`` is 1 for the first revision; the chain's first answer (round 0) has no row.
    ``conversation_artifact_id`` is the stored conversation the model was sent (and answered).
    """

    __tablename__ = "run_revisions"
    id: Mapped[IntPk]
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), unique=True)
    revision_of: Mapped[RunRef]
    first_run_id: Mapped[RunRef]
    round: Mapped[int]
    frames_shown: Mapped[int]
    findings_shown: Mapped[bool]
    conversation_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    created_at: Mapped[Created]

    __table_args__ = (UniqueConstraint("first_run_id", "round", name="uq_run_revisions_round"),)


class TaskProposalRow(Base):
    """One model-proposed variant of a template, waiting for a person (migration 1510).

    ``template_text`` is the template as it was given, ``values`` the full dimension values of
    the variant; ``problem`` is set when the variant does not make a valid task (it can then
    only be rejected). ``prompt`` and ``reply`` are exactly what the model was sent and said.
    """

    __tablename__ = "task_proposals"
    id: Mapped[IntPk]
    batch_id: Mapped[str] = mapped_column(String(32), index=True)
    template: Mapped[str] = mapped_column(String(200), index=True)
    template_sha256: Mapped[str] = mapped_column(String(64))
    template_text: Mapped[str] = mapped_column(Text)
    values: Mapped[dict[str, Any]] = mapped_column(JSON)
    proposed: Mapped[list[Any]] = mapped_column(JSON)
    """The dimension names whose values the model proposed (the others were allocated)."""
    ref: Mapped[str | None] = mapped_column(String(200))
    """``ID@VERSION`` the variant would be registered as (None when it makes no valid task)."""
    content_hash: Mapped[str | None] = mapped_column(String(64))
    problem: Mapped[str | None] = mapped_column(Text)
    rationale: Mapped[str] = mapped_column(Text, default="")
    api: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    prompt: Mapped[str] = mapped_column(Text)
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    reply: Mapped[str] = mapped_column(Text)
    cost_usd: Mapped[float | None]
    mock: Mapped[bool]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id"))
    created_at: Mapped[Created]


class TaskProposalDecisionRow(Base):
    """A person's one decision on a proposal: accepted (with the version registered) or rejected."""

    __tablename__ = "task_proposal_decisions"
    id: Mapped[IntPk]
    proposal_id: Mapped[int] = mapped_column(ForeignKey("task_proposals.id"), unique=True)
    decision: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    registered_ref: Mapped[str | None] = mapped_column(String(200))
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id"))
    decided_by_name: Mapped[str] = mapped_column(String(200), default="")
    decided_at: Mapped[Created]
