"""Tables of the review queue (created by migration ``0100_review``, chained after ``0001``).

``review_items`` carries progress state (open → disputed → resolved), like ``runs.status``;
``reviews`` is append-only: every label a person gave is kept. ``review_scans`` remembers which
evaluations were already turned into queue items, so scanning is idempotent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, RunRef
from service.storage.models import Base


class ReviewItem(Base):
    """One (run, criterion) pair that people must look at."""

    __tablename__ = "review_items"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    run_id: Mapped[RunRef]
    criterion: Mapped[str] = mapped_column(String(50))
    kind: Mapped[str] = mapped_column(String(16))  # uncertain | audit
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"))
    original_status: Mapped[str] = mapped_column(String(20))
    suggestion: Mapped[str | None] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text)
    audited_judges: Mapped[list[Any]] = mapped_column(JSON)
    reviews_needed: Mapped[int]
    state: Mapped[str] = mapped_column(String(16), default="open", index=True)
    final_label: Mapped[str | None] = mapped_column(String(20))
    resolved_evaluation_id: Mapped[int | None] = mapped_column(ForeignKey("evaluations.id"))
    created_at: Mapped[Created]
    resolved_at: Mapped[datetime | None]

    __table_args__ = (UniqueConstraint("run_id", "criterion", name="uq_review_items_run_crit"),)


class ReviewRow(Base):
    """One person's label on one item (append-only)."""

    __tablename__ = "reviews"
    id: Mapped[IntPk]
    item_id: Mapped[str] = mapped_column(ForeignKey("review_items.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id"))
    reviewer_name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    note: Mapped[str] = mapped_column(Text, default="")
    time_s: Mapped[float | None]
    adjudication: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[Created]
    unblinded: Mapped[bool] = mapped_column(default=False, server_default=false())
    """True when the label was given by an admin, who can see model identities."""

    __table_args__ = (
        UniqueConstraint("item_id", "reviewer_id", "adjudication", name="uq_reviews_once"),
    )


class ReviewScan(Base):
    """An evaluation already turned into queue items."""

    __tablename__ = "review_scans"
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"), primary_key=True)
    run_id: Mapped[RunRef]
    items: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[Created]
