"""FastAPI dependencies shared by every router (ours and other areas'): context and caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from service.access.tokens import Principal, authenticate
from service.context import ServiceContext


def get_ctx(request: Request) -> ServiceContext:
    """The service context stored on the app."""
    ctx: ServiceContext = request.app.state.ctx
    return ctx


def _auth(ctx: ServiceContext, header: str | None) -> Principal:
    return authenticate(ctx.db, header)


def get_principal(
    request: Request,
    authorization: Annotated[str | None, Header(description="Bearer <token>")] = None,
) -> Principal:
    """The authenticated caller (401 without a valid bearer token)."""
    return _auth(get_ctx(request), authorization)


Ctx = Annotated[ServiceContext, Depends(get_ctx)]
Caller = Annotated[Principal, Depends(get_principal)]
