"""Listing and revoking tokens, and the ``7d`` / ``12h`` lifetimes ``--expires-in`` takes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update

from regua.errors import InputError, NotFoundError
from regua.records import field_dict
from service.access.tokens import LEGACY, aware, token_state
from service.storage import ApiToken, Database, WebSession, utcnow

_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_LIFETIME = timedelta(days=3650)


def parse_duration(text: str) -> timedelta:
    """``30m``, ``12h``, ``7d``, ``2w`` or ``90s`` as a positive duration (422 otherwise)."""
    match = _DURATION.match(text)
    if match is None:
        raise InputError(
            f"lifetime {text!r} is not a number followed by s, m, h, d or w (e.g. 7d, 12h)"
        )
    value = timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    if value <= timedelta(0) or value > MAX_LIFETIME:
        raise InputError(f"lifetime {text!r} must be more than 0 and at most 3650 days")
    return value


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown about a token: never its secret or its hash."""

    id: int
    name: str
    role: str
    prefix: str
    state: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    legacy_hash: bool
    """Stored as a bare sha256 still (re-hashed on the token's next use)."""


def _info(row: ApiToken) -> TokenInfo:
    return TokenInfo(
        **field_dict(row, "id", "name", "role", "prefix"),
        state=token_state(row),
        created_at=aware(row.created_at) or utcnow(),
        expires_at=aware(row.expires_at),
        revoked_at=aware(row.revoked_at),
        legacy_hash=row.hash_scheme == LEGACY,
    )


def list_tokens(db: Database) -> list[TokenInfo]:
    """Every token, oldest first."""
    with db.read() as s:
        return [_info(r) for r in s.scalars(select(ApiToken).order_by(ApiToken.id))]


def token_info(db: Database, token_id: int) -> TokenInfo:
    """One token (404 for an unknown id)."""
    with db.read() as s:
        row = s.get(ApiToken, token_id)
        if row is None:
            raise NotFoundError(f"no token {token_id}")
        return _info(row)


def revoke_token(db: Database, token_id: int) -> TokenInfo:
    """Revoke a token and end its web sessions, at once (404 for an unknown id).

    Revoking a revoked token changes nothing and answers the same.
    """
    now = utcnow()
    with db.write() as s:
        row = s.get(ApiToken, token_id)
        if row is None:
            raise NotFoundError(f"no token {token_id}")
        if row.revoked_at is None:
            row.revoked_at = now
        s.execute(
            update(WebSession)
            .where(WebSession.token_id == token_id, WebSession.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        s.flush()
        return _info(row)
