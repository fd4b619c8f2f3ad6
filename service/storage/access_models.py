"""Web login sessions (created by migration ``0400_access_sessions``).

The login cookie holds a random session id; only its keyed hash is stored here, with the token
it was opened with, when it expires and when it was ended (logout, or its token revoked).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from service.storage.columns import Created, IntPk
from service.storage.models import Base


class WebSession(Base):
    """One login of the web pages."""

    __tablename__ = "web_sessions"
    id: Mapped[IntPk]
    session_hash: Mapped[str] = mapped_column(String(64), unique=True)
    token_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id"), index=True)
    created_at: Mapped[Created]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]
