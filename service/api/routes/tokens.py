"""``/v1/tokens``: API tokens (admin only): create, list (never a secret), revoke."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from service.access.token_admin import (
    TokenInfo,
    list_tokens,
    parse_duration,
    revoke_token,
    token_info,
)
from service.access.tokens import create_token
from service.api.deps import Admin, Ctx
from service.api.schemas import TokenCreated, TokenRequest
from service.api.text import RowId
from service.storage import iso

router = APIRouter(prefix="/v1/tokens", tags=["tokens"])


class TokenLine(BaseModel):
    """One token as an admin may see it, never its secret or the secret's hash.

    Its id, name, role, the secret's first characters and its state (``active``, ``revoked``,
    ``expired``).
    """

    id: int
    name: str
    role: str
    prefix: str
    state: str
    created_at: str | None
    expires_at: str | None
    revoked_at: str | None
    legacy_hash: bool


class TokenList(BaseModel):
    """Every token, oldest first."""

    tokens: list[TokenLine]


def _line(info: TokenInfo) -> TokenLine:
    return TokenLine(
        id=info.id,
        name=info.name,
        role=info.role,
        prefix=info.prefix + "…",
        state=info.state,
        created_at=iso(info.created_at),
        expires_at=iso(info.expires_at),
        revoked_at=iso(info.revoked_at),
        legacy_hash=info.legacy_hash,
    )


@router.post("", status_code=201, response_model=TokenCreated)
def new_token(body: TokenRequest, ctx: Ctx, _admin: Admin) -> TokenCreated:
    """Create a bearer token (admin only); the secret is returned once and stored hashed.

    ``expires_in`` (e.g. ``7d``, ``12h``) makes it stop working after that long.
    """
    lifetime = parse_duration(body.expires_in) if body.expires_in else None
    secret, principal = create_token(ctx.db, body.role, body.name, expires_in=lifetime)
    info = token_info(ctx.db, principal.token_id)
    return TokenCreated(
        token=secret,
        role=principal.role,
        name=principal.name,
        id=principal.token_id,
        expires_at=iso(info.expires_at),
    )


@router.get("", response_model=TokenList)
def get_tokens(ctx: Ctx, _admin: Admin) -> TokenList:
    """Every token with its state (admin only); secrets and hashes are never shown."""
    return TokenList(tokens=[_line(t) for t in list_tokens(ctx.db)])


@router.delete("/{token_id}", response_model=TokenLine)
def delete_token(token_id: RowId, ctx: Ctx, _admin: Admin) -> TokenLine:
    """Revoke a token (admin only): it and its web sessions stop working at once.

    404 for an unknown id; revoking a revoked token answers the same as the first time.
    """
    return _line(revoke_token(ctx.db, token_id))
