"""Bearer tokens with roles. Only a keyed hash of a token is stored.

Roles: ``submitter`` (submit, read own runs and their artifacts), ``reviewer`` (the review queue
only, never model identities), ``admin`` (everything: tasks, judges, tokens, all runs).

A token is stored as HMAC-SHA256 keyed with the installation secret (:mod:`.secret`), so a copy
of the database alone cannot confirm a guessed token. Rows written before that rule hold a bare
sha256 (``hash_scheme = 'sha256'``): they keep working and are re-hashed on their first use.
Every request reads the token's row: a revocation or an expiry takes effect at once, in every
process (there is no principal cache).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from regua.errors import AuthError, InputError, PermissionDeniedError
from service.access.secret import keyed_hash, secret_of
from service.storage import ApiToken, Database, utcnow
from service.storage.files import write_private

ROLES = ("submitter", "reviewer", "admin")
TOKEN_PREFIX = "rg_"
ADMIN_TOKEN_FILE = "admin-token"
KEYED = "hmac-sha256"
LEGACY = "sha256"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the token's row id, name and role."""

    token_id: int
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        """Whether the caller may do everything."""
        return self.role == "admin"

    def require(self, *roles: str) -> None:
        """Raise :class:`PermissionDeniedError` unless the caller has one of ``roles``."""
        if self.role not in roles and not self.is_admin:
            raise PermissionDeniedError(
                f"role {self.role!r} may not do this (needs {' or '.join(roles)})"
            )


def aware(value: datetime | None) -> datetime | None:
    """``value`` as an aware UTC time (SQLite hands back naive UTC values)."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def token_state(row: ApiToken, now: datetime | None = None) -> str:
    """``active``, ``revoked`` or ``expired``."""
    if row.revoked_at is not None:
        return "revoked"
    expires = aware(row.expires_at)
    if expires is not None and expires <= (now or utcnow()):
        return "expired"
    return "active"


def hash_token(db: Database, token: str) -> str:
    """The stored form of a token on ``db``: HMAC-SHA256 keyed with the installation secret."""
    return keyed_hash(secret_of(db), "token", token)


def create_token(
    db: Database, role: str, name: str = "", *, expires_in: timedelta | None = None
) -> tuple[str, Principal]:
    """Create a token with ``role``; returns the secret (shown once) and its principal.

    ``expires_in`` makes it stop working after that long (default: never).
    """
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    if expires_in is not None and expires_in <= timedelta(0):
        raise InputError("a token's lifetime must be positive")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with db.write() as s:
        row = ApiToken(
            name=name or role,
            role=role,
            token_hash=hash_token(db, secret),
            hash_scheme=KEYED,
            prefix=secret[:10],
            expires_at=utcnow() + expires_in if expires_in is not None else None,
        )
        s.add(row)
        s.flush()
        principal = Principal(row.id, row.name, row.role)
    return secret, principal


def _row(s: Session, digest: str, scheme: str) -> ApiToken | None:
    return s.scalar(
        select(ApiToken).where(ApiToken.token_hash == digest, ApiToken.hash_scheme == scheme)
    )


def _rehash_legacy(db: Database, token: str, keyed: str) -> None:
    """Replace a legacy row's bare sha256 with the keyed hash (its first use since 0400)."""
    legacy = hashlib.sha256(token.encode("utf-8")).hexdigest()
    with db.write() as s:
        row = _row(s, legacy, LEGACY)
        if row is not None:
            row.token_hash, row.hash_scheme = keyed, KEYED


def principal_of(db: Database, token: str) -> Principal:
    """The principal of a token's secret; raises :class:`AuthError` (401).

    Unknown, revoked and expired tokens are refused with a message saying which.
    """
    keyed = hash_token(db, token)
    legacy = hashlib.sha256(token.encode("utf-8")).hexdigest()
    with db.read() as s:
        row = _row(s, keyed, KEYED) or _row(s, legacy, LEGACY)
        if row is None:
            raise AuthError("unknown token")
        state = token_state(row)
        if state != "active":
            raise AuthError(f"token {row.prefix}… is {state}")
        principal = Principal(row.id, row.name, row.role)
        rehash = row.hash_scheme == LEGACY
    if rehash:
        _rehash_legacy(db, token, keyed)
    return principal


def authenticate(db: Database, authorization: str | None) -> Principal:
    """Resolve an ``Authorization: Bearer …`` header; raises :class:`AuthError` (401)."""
    if not authorization:
        raise AuthError("missing bearer token (Authorization: Bearer <token>)")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("malformed Authorization header; expected 'Bearer <token>'")
    return principal_of(db, token.strip())


def ensure_admin_token(db: Database, data_dir: Path) -> Path | None:
    """Create the bootstrap admin token when no usable admin token exists.

    On first start (or when every admin token was revoked or expired) it is written to
    ``data_dir/admin-token`` (mode 0600). Returns the file path when a token was created.
    """
    with db.read() as s:
        admins = s.scalars(select(ApiToken).where(ApiToken.role == "admin")).all()
        if any(token_state(row) == "active" for row in admins):
            return None
    secret, _ = create_token(db, "admin", "bootstrap-admin")
    path = data_dir / ADMIN_TOKEN_FILE
    write_private(path, (secret + "\n").encode())
    return path
