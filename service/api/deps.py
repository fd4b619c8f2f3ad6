"""FastAPI dependencies shared by every router (ours and other areas'): context and caller.

A route states who may call it in its signature: ``caller: Submitter`` (submitters and admins),
``caller: Reviewer`` (reviewers and admins), ``caller: Admin``; ``caller: Caller`` is any valid
token (a route that decides per item, such as reading tasks). A caller without the role gets
403 before the route runs.
"""

from __future__ import annotations

from collections.abc import Callable
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


def _role(role: str) -> Callable[[Principal], Principal]:
    """A dependency that passes the caller on when it has ``role`` (admins have every role)."""

    def caller_with_role(caller: Caller) -> Principal:
        caller.require(role)
        return caller

    caller_with_role.__name__ = f"caller_{role}"
    return caller_with_role


Submitter = Annotated[Principal, Depends(_role("submitter"))]
"""A caller with the submitter (or admin) role; 403 for a reviewer."""
Reviewer = Annotated[Principal, Depends(_role("reviewer"))]
"""A caller with the reviewer (or admin) role; 403 for a submitter."""
Admin = Annotated[Principal, Depends(_role("admin"))]
"""An admin caller; 403 for anyone else."""
