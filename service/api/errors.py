"""The one place where :mod:`regua.errors` classes become HTTP status codes, plus body limits."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from regua.errors import (
    AuthError,
    BackpressureError,
    ImmutableRecordError,
    InputError,
    NotFoundError,
    PermissionDeniedError,
    ReguaError,
    SandboxUnavailableError,
    StorageError,
    TaskIntegrityError,
    UnknownTaskError,
)

#: Most specific first.
STATUS_FOR: tuple[tuple[type[ReguaError], int, str], ...] = (
    (UnknownTaskError, 404, "unknown_task"),
    (PermissionDeniedError, 403, "forbidden"),
    (AuthError, 401, "unauthorized"),
    (BackpressureError, 429, "queue_full"),
    (NotFoundError, 404, "not_found"),
    (TaskIntegrityError, 409, "task_changed"),
    (ImmutableRecordError, 409, "immutable"),
    (InputError, 422, "invalid_input"),
    (SandboxUnavailableError, 503, "sandbox_unavailable"),
    (StorageError, 503, "storage_unavailable"),
    (ReguaError, 500, "internal_error"),
)


def error_response(exc: ReguaError) -> JSONResponse:
    """The JSON error for one of our exceptions, with its status code and headers."""
    status, code = next((st, c) for cls, st, c in STATUS_FOR if isinstance(exc, cls))
    body: dict[str, Any] = {"error": code, "detail": str(exc)}
    headers: dict[str, str] = {}
    if isinstance(exc, UnknownTaskError):
        body["known_tasks"] = exc.known
    if isinstance(exc, BackpressureError):
        headers["Retry-After"] = str(exc.retry_after_s)
        body["retry_after_s"] = exc.retry_after_s
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(body, status_code=status, headers=headers)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def install_error_handlers(app: FastAPI) -> None:
    """Map regua errors and request validation errors to JSON responses."""

    async def on_regua(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ReguaError)
        return error_response(exc)

    async def on_validation(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {"field": _field(e.get("loc", ())), "message": e.get("msg", ""), "type": e.get("type")}
            for e in exc.errors()
        ]
        first = errors[0] if errors else {"field": "body", "message": "invalid"}
        detail = f"invalid field '{first['field']}': {first['message']}"
        return JSONResponse(
            {"error": "invalid_request", "detail": detail, "fields": errors}, status_code=422
        )

    app.add_exception_handler(ReguaError, on_regua)
    app.add_exception_handler(RequestValidationError, on_validation)


class BodyLimitMiddleware:
    """Refuse request bodies above ``max_bytes`` with 413, before anything is parsed or stored."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        """Wrap ``app``, refusing bodies larger than ``max_bytes``."""
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, answering 413 once its body (declared or read) is too large."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._too_large(send)
                return
        seen = 0
        too_large = False

        async def limited() -> Message:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    too_large = True
                    raise _TooLargeError
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLargeError:
            await self._too_large(send)

    async def _too_large(self, send: Send) -> None:
        body = json.dumps(
            {
                "error": "payload_too_large",
                "detail": f"request body exceeds {self.max_bytes} bytes",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLargeError(Exception):
    pass
