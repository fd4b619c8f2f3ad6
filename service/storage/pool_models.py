"""Tables of task pools (created by migration ``0710_task_pools``).

``task_retirements`` records that a task version was retired (rotated out; a retired reserved
task's prompt may be published). ``leak_flags`` records that a run's raw reply carried a
reserved task's canary or prompt, found by the check stage at extraction. Both are append-only.
"""

from __future__ import annotations

from sqlalchemy import String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk, RunRef
from service.storage.models import Base


class TaskRetirement(Base):
    """One retired task version (by reference); a row is never removed."""

    __tablename__ = "task_retirements"
    id: Mapped[IntPk]
    task_ref: Mapped[str] = mapped_column(String(200), unique=True)
    retired_by: Mapped[str] = mapped_column(String(200), default="")
    note: Mapped[str] = mapped_column(Text, default="")
    retired_at: Mapped[Created]


class LeakFlag(Base):
    """A reserved task (``task_ref``) whose canary, prompt or 8-grams (``kind``) a reply carries."""

    __tablename__ = "leak_flags"
    __table_args__ = (UniqueConstraint("run_id", "task_ref", "kind"),)
    id: Mapped[IntPk]
    run_id: Mapped[RunRef]
    task_ref: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # canary | prompt | overlap
    overlap: Mapped[str | None] = mapped_column(Text)  # overlap: the reply's shared text
    share: Mapped[float | None]  # overlap: share of the prompt's 8-grams
    created_at: Mapped[Created]
