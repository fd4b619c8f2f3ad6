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
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.models import Base, utcnow


class ReviewItem(Base):
    """One (run, criterion) pair that people must look at."""

    __tablename__ = "review_items"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    criterion: Mapped[str] = mapped_column(String(50))
    kind: Mapped[str] = mapped_column(String(16))  # uncertain | audit
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"))
    original_status: Mapped[str] = mapped_column(String(20))
    suggestion: Mapped[str | None] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text)
    audited_judges: Mapped[list[Any]] = mapped_column(JSON)
    reviews_needed: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="open", index=True)
    final_label: Mapped[str | None] = mapped_column(String(20))
    resolved_evaluation_id: Mapped[int | None] = mapped_column(ForeignKey("evaluations.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (UniqueConstraint("run_id", "criterion", name="uq_review_items_run_crit"),)


class ReviewRow(Base):
    """One person's label on one item (append-only)."""

    __tablename__ = "reviews"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("review_items.id"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id"))
    reviewer_name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    note: Mapped[str] = mapped_column(Text, default="")
    time_s: Mapped[float | None] = mapped_column(Float)
    adjudication: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    unblinded: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """True when the label was given by an admin, who can see model identities."""

    __table_args__ = (
        UniqueConstraint("item_id", "reviewer_id", "adjudication", name="uq_reviews_once"),
    )


class ReviewScan(Base):
    """An evaluation already turned into queue items."""

    __tablename__ = "review_scans"
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    items: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
