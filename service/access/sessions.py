"""Web login sessions and the CSRF tokens of their forms.

Logging in on the web pages opens a server-side session: the cookie holds a random id (never the
bearer token), the database only its keyed hash, and the session ends at its expiry, at logout or
when its token is revoked or expires. Each session has one CSRF token, derived from its id with
the installation secret (nothing to store; unforgeable without both). The login form, shown
before any session exists, is protected by a signed double-submit pair: a random nonce in a
cookie and its keyed hash in the form.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select

from service.access.secret import keyed_hash, secret_of
from service.access.tokens import Principal, aware, token_state
from service.storage import ApiToken, Database, WebSession, utcnow


@dataclass(frozen=True)
class Login:
    """A live web session: who it is and the CSRF token its forms must carry."""

    principal: Principal
    csrf: str
    session_id: int


def _session_hash(db: Database, sid: str) -> str:
    return keyed_hash(secret_of(db), "session", sid)


def csrf_of(db: Database, sid: str) -> str:
    """The CSRF token of the session whose cookie holds ``sid``."""
    return keyed_hash(secret_of(db), "csrf", sid)


def open_session(db: Database, principal: Principal, ttl: timedelta) -> str:
    """Open a session for ``principal`` lasting ``ttl``; returns its id (for the cookie only).

    Sessions that expired or ended more than a day ago are deleted on the way.
    """
    sid = secrets.token_urlsafe(32)
    now = utcnow()
    with db.write() as s:
        s.execute(delete(WebSession).where(WebSession.expires_at < now - timedelta(days=1)))
        s.add(
            WebSession(
                session_hash=_session_hash(db, sid),
                token_id=principal.token_id,
                created_at=now,
                expires_at=now + ttl,
            )
        )
    return sid


def session_login(db: Database, sid: str | None) -> Login | None:
    """The live session of cookie value ``sid`` (None: unknown, ended, expired, token gone)."""
    if not sid:
        return None
    now = utcnow()
    with db.read() as s:
        found = s.execute(
            select(WebSession, ApiToken)
            .join(ApiToken, ApiToken.id == WebSession.token_id)
            .where(WebSession.session_hash == _session_hash(db, sid))
        ).first()
        if found is None:
            return None
        session, token = found
        expires = aware(session.expires_at)
        if session.revoked_at is not None or expires is None or expires <= now:
            return None
        if token_state(token, now) != "active":
            return None
        principal = Principal(token.id, token.name, token.role)
        return Login(principal, csrf_of(db, sid), session.id)


def close_session(db: Database, sid: str | None) -> bool:
    """End the session of cookie value ``sid`` (logout); whether a live one was ended."""
    if not sid:
        return False
    with db.write() as s:
        row = s.scalar(select(WebSession).where(WebSession.session_hash == _session_hash(db, sid)))
        if row is None or row.revoked_at is not None:
            return False
        row.revoked_at = utcnow()
        return True


def new_login_nonce() -> str:
    """A random nonce for the login form's cookie."""
    return secrets.token_urlsafe(24)


def login_csrf(db: Database, nonce: str) -> str:
    """The login form's CSRF token for the nonce in its cookie."""
    return keyed_hash(secret_of(db), "login-csrf", nonce)


def same_token(expected: str, given: str | None) -> bool:
    """Constant-time comparison of a CSRF token."""
    return bool(given) and hmac.compare_digest(expected.encode(), (given or "").encode())
