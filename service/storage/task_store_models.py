"""The task store: task versions users registered, read by every service process."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.models import Base, utcnow


class TaskVersionRow(Base):
    """One registered task version: frozen at registration, never updated or deleted.

    ``source`` says where it came from (``api``, ``cli:FILE``, ``dir:FILE``); the spec document
    is exactly what ``GET /v1/tasks/{ref}`` returns under ``spec``.
    """

    __tablename__ = "task_versions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ref: Mapped[str] = mapped_column(String(200), unique=True)
    task_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[int] = mapped_column(Integer)
    family: Mapped[str] = mapped_column(String(200))
    pool: Mapped[str] = mapped_column(String(40))
    content_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    source: Mapped[str] = mapped_column(String(500))
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
