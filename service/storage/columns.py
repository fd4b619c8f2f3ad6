"""Column types the models share: the integer key, the creation time, links to runs and evaluations.

Each is an ``Annotated`` type that carries its ``mapped_column``, so a model writes
``id: Mapped[IntPk]`` where it would repeat ``mapped_column(Integer, primary_key=True)``. With
:data:`TYPE_MAP` (the declarative base's type map) a bare ``Mapped[datetime]`` is a time-zone-aware
``DateTime`` and a bare ``Mapped[float]`` a ``Float`` (not SQLAlchemy's default ``Double``);
``int`` and ``bool`` need no ``mapped_column`` either. :class:`CriterionKey` and :class:`StageKey`
are the leading columns several tables share, as mixins (``sort_order`` keeps them first).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


TYPE_MAP: dict[Any, Any] = {datetime: DateTime(timezone=True), float: Float()}

IntPk = Annotated[int, mapped_column(Integer, primary_key=True)]
"""An integer primary key (``id``)."""
Created = Annotated[datetime, mapped_column(DateTime(timezone=True), default=utcnow)]
"""When the row was written (set on insert)."""
RunRef = Annotated[str, mapped_column(ForeignKey("runs.id"), index=True)]
"""The run a row belongs to (indexed)."""
EvaluationRef = Annotated[int, mapped_column(ForeignKey("evaluations.id"), index=True)]
"""The evaluation a row belongs to (indexed)."""


class CriterionKey:
    """The columns every row about one criterion of one evaluation starts with (a mixin)."""

    id: Mapped[IntPk] = mapped_column(sort_order=-3)
    evaluation_id: Mapped[EvaluationRef] = mapped_column(sort_order=-2)
    criterion: Mapped[str] = mapped_column(String(50), sort_order=-1)


class StageKey:
    """The columns every row about one stage of a run starts with (a mixin)."""

    id: Mapped[IntPk] = mapped_column(sort_order=-4)
    run_id: Mapped[RunRef] = mapped_column(sort_order=-3)
    stage: Mapped[str] = mapped_column(String(32), sort_order=-2)
    version: Mapped[str] = mapped_column(String(200), sort_order=-1)
