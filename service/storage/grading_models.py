"""Tables of adjudications and rubric scores (created by migration ``1400_graded_adjudication``).

Both are append-only evidence of one evaluation: an ``adjudications`` row records why the panel's
adjudicator was asked on a criterion, the anonymous answers it was shown, its prompt and reply
(artifacts of the run), whether the gate trusted it and what came of it; a ``rubric_scores`` row
records a graded task's score, each level, which bounds held, whether the threshold was reached
and the verdict, each in its own field. Levels of single verdicts and criterion outcomes are
columns of ``verdicts`` and ``criterion_outcomes``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import CriterionKey, IntPk
from service.storage.models import Base


class AdjudicationRow(CriterionKey, Base):
    """One adjudication of one criterion in one evaluation."""

    __tablename__ = "adjudications"
    adjudicator_id: Mapped[str] = mapped_column(String(200))
    adjudicator_hash: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text)  # why it was asked (never shown to it)
    answers: Mapped[list[Any]] = mapped_column(JSON)  # what it was shown: anonymous answers
    trusted: Mapped[bool]
    result: Mapped[str] = mapped_column(String(40))  # decided | adjudicator_uncertain | ...
    status: Mapped[str | None] = mapped_column(String(20))  # its verdict's status
    level: Mapped[int | None]  # its level on a graded criterion
    evidence: Mapped[list[Any] | None] = mapped_column(JSON)
    failure_cause: Mapped[str | None] = mapped_column(String(100))
    failure_detail: Mapped[str | None] = mapped_column(Text)
    prompt_version: Mapped[str | None] = mapped_column(String(100))
    prompt_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))
    raw_artifact_id: Mapped[int | None] = mapped_column(ForeignKey("artifacts.id"))


class RubricScoreRow(Base):
    """A graded task's rubric on one evaluation: score, levels, bounds and verdict apart."""

    __tablename__ = "rubric_scores"
    id: Mapped[IntPk]
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"), unique=True)
    name: Mapped[str] = mapped_column(String(50))
    formula: Mapped[str] = mapped_column(Text)
    score: Mapped[float | None]  # None: a level is not decided
    score_text: Mapped[str | None] = mapped_column(String(40))  # exact, as decimal text
    arithmetic: Mapped[str | None] = mapped_column(Text)
    threshold: Mapped[float]
    threshold_met: Mapped[bool | None]
    max_score: Mapped[float]
    levels: Mapped[dict[str, Any]] = mapped_column(JSON)  # criterion -> level | None
    bounds: Mapped[list[Any]] = mapped_column(JSON)  # [{criterion, op, bound, text, level, held}]
    missing: Mapped[list[Any]] = mapped_column(JSON)
    verdict: Mapped[str] = mapped_column(String(16))  # the evaluation's outcome status
