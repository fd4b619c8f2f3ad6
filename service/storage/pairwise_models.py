"""Tables of pairwise judging (created by migration ``0620_pairwise``). Append-only evidence.

A :class:`PairwiseComparisonRow` is one comparison of two stored runs (or, calibrating the
judge, of two drawings of imported preferences: no runs) on one criterion, asked in both orders:
each order's raw reply is an artifact (kind ``pairwise_reply``); the row keeps what each order
said, the result (``a``, ``b``, ``tie``; NULL when the judge failed, with its cause) and whether
the verdict flipped with the order. A :class:`PairwisePreferenceRow` is one imported human
preference between two drawings (by sha256), which calibrates pairwise judges.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk
from service.storage.models import Base


class PairwiseComparisonRow(Base):
    """One both-orders comparison of run ``a`` with run ``b`` on one criterion."""

    __tablename__ = "pairwise_comparisons"
    id: Mapped[IntPk]
    task_ref: Mapped[str] = mapped_column(String(200), index=True)
    criterion: Mapped[str] = mapped_column(String(100))
    judge_id: Mapped[str] = mapped_column(String(200))
    a_run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))  # None: a drawing of
    b_run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))  # imported preferences
    a_model: Mapped[str] = mapped_column(String(200))  # model label, or the drawing's file name
    b_model: Mapped[str] = mapped_column(String(200))
    a_sha256: Mapped[str | None] = mapped_column(String(64))
    b_sha256: Mapped[str | None] = mapped_column(String(64))
    first_winner: Mapped[str | None] = mapped_column(String(8))  # a shown as X
    second_winner: Mapped[str | None] = mapped_column(String(8))  # b shown as X
    first_reply_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    second_reply_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    result: Mapped[str | None] = mapped_column(String(8))
    position_biased: Mapped[bool] = mapped_column(default=False)
    failure_cause: Mapped[str | None] = mapped_column(String(64))
    failure_detail: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[Created]


class PairwisePreferenceRow(Base):
    """One imported human preference: which of two drawings is better (or a tie)."""

    __tablename__ = "pairwise_preferences"
    id: Mapped[IntPk]
    left_sha256: Mapped[str] = mapped_column(String(64), index=True)
    right_sha256: Mapped[str] = mapped_column(String(64))
    left_name: Mapped[str] = mapped_column(String(500))
    right_name: Mapped[str] = mapped_column(String(500))
    winner: Mapped[str] = mapped_column(String(8))
    annotator: Mapped[str] = mapped_column(String(200))
    task_ref: Mapped[str | None] = mapped_column(String(200))
    criterion: Mapped[str | None] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(500))
    line: Mapped[int]
    left_model: Mapped[str | None] = mapped_column(String(200))  # from the CSV, when it says
    right_model: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[Created]
