"""The task store: task versions users registered, read by every service process."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk
from service.storage.models import Base


class TaskVersionRow(Base):
    """One registered task version: frozen at registration, never updated or deleted.

    ``source`` says where it came from (``api``, ``cli:FILE``, ``dir:FILE``); the spec document
    is exactly what ``GET /v1/tasks/{ref}`` returns under ``spec``.
    """

    __tablename__ = "task_versions"
    id: Mapped[IntPk]
    ref: Mapped[str] = mapped_column(String(200), unique=True)
    task_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[int]
    family: Mapped[str] = mapped_column(String(200))
    pool: Mapped[str] = mapped_column(String(40))
    content_hash: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    source: Mapped[str] = mapped_column(String(500))
    registered_at: Mapped[Created]
