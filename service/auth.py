"""Bearer tokens with roles. Only the sha256 of a token is stored.

Roles: ``submitter`` (submit, read own runs and their artifacts), ``reviewer`` (the review queue
only, never model identities), ``admin`` (everything: tasks, judges, tokens, all runs).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from regua.errors import AuthError, InputError, PermissionDeniedError
from service.db import ApiToken, Database

ROLES = ("submitter", "reviewer", "admin")
TOKEN_PREFIX = "rg_"
ADMIN_TOKEN_FILE = "admin-token"
_PRINCIPALS: dict[tuple[str, str], Principal] = {}


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


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(db: Database, role: str, name: str = "") -> tuple[str, Principal]:
    """Create a token with ``role``; returns the secret (shown once) and its principal."""
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with db.write() as s:
        row = ApiToken(
            name=name or role,
            role=role,
            token_hash=hash_token(secret),
            prefix=secret[:10],
        )
        s.add(row)
        s.flush()
        principal = Principal(row.id, row.name, row.role)
    return secret, principal


def authenticate(db: Database, authorization: str | None) -> Principal:
    """Resolve an ``Authorization: Bearer …`` header; raises :class:`AuthError` (401)."""
    if not authorization:
        raise AuthError("missing bearer token (Authorization: Bearer <token>)")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("malformed Authorization header; expected 'Bearer <token>'")
    digest = hash_token(token.strip())
    key = (db.url, digest)
    cached = _PRINCIPALS.get(key)
    if cached is not None:
        return cached
    with db.read() as s:
        row = s.scalar(select(ApiToken).where(ApiToken.token_hash == digest))
        if row is None:
            raise AuthError("unknown token")
        principal = Principal(row.id, row.name, row.role)
    if len(_PRINCIPALS) < 10_000:  # tokens are never changed in place, so caching is safe
        _PRINCIPALS[key] = principal
    return principal


def ensure_admin_token(db: Database, data_dir: Path) -> Path | None:
    """On first start (no admin token exists) create one and write it to ``data_dir/admin-token``
    (mode 0600). Returns the file path when a token was created, else None."""
    with db.read() as s:
        if s.scalar(select(ApiToken.id).where(ApiToken.role == "admin").limit(1)) is not None:
            return None
    secret, _ = create_token(db, "admin", "bootstrap-admin")
    path = data_dir / ADMIN_TOKEN_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    return path
