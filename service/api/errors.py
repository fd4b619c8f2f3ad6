"""The one place where :mod:`regua.errors` classes become HTTP status codes, plus body limits.

Every error body has the documented shape ``{"error": <code>, "detail": <sentence>}`` (plus
extra keys some errors add: ``known_tasks``, ``retry_after_s``, ``fields``), whatever raised it:
one of our exceptions, request validation, the framework (unknown path, wrong method) or a bug.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from regua.errors import (
    ArtifactIntegrityError,
    AuthError,
    BackpressureError,
    BatchTooLargeError,
    GateDemotionError,
    ImmutableRecordError,
    InputError,
    ModelReplyError,
    NotFoundError,
    PanelNotSeatedError,
    PermissionDeniedError,
    QueueShareError,
    RateLimitedError,
    ReguaError,
    SandboxUnavailableError,
    StorageError,
    TaskIntegrityError,
    UnknownTaskError,
)
from service.api.body_limit import BodyLimitMiddleware

__all__ = ["STATUS_FOR", "BodyLimitMiddleware", "error_response", "install_error_handlers"]

#: Most specific first.
STATUS_FOR: tuple[tuple[type[ReguaError], int, str], ...] = (
    (UnknownTaskError, 404, "unknown_task"),
    (PermissionDeniedError, 403, "forbidden"),
    (AuthError, 401, "unauthorized"),
    (RateLimitedError, 429, "rate_limited"),
    (QueueShareError, 429, "queue_share_full"),
    (BackpressureError, 429, "queue_full"),
    (NotFoundError, 404, "not_found"),
    (TaskIntegrityError, 409, "task_changed"),
    (GateDemotionError, 409, "would_demote"),
    (ImmutableRecordError, 409, "immutable"),
    (BatchTooLargeError, 422, "batch_too_large"),
    (PanelNotSeatedError, 422, "panel_not_seated"),
    (InputError, 422, "invalid_input"),
    (ModelReplyError, 502, "model_reply"),
    (SandboxUnavailableError, 503, "sandbox_unavailable"),
    (ArtifactIntegrityError, 500, "artifact_integrity"),
    (StorageError, 503, "storage_unavailable"),
    (ReguaError, 500, "internal_error"),
)

#: Codes of the errors the framework raises itself (unknown path, wrong method, ...).
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
}


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


def json_position(doc: str, pos: int) -> str:
    """``line L column C (character P)`` of ``pos`` in ``doc`` (all 1-based but ``P``)."""
    line = doc.count("\n", 0, pos) + 1
    column = pos - (doc.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {column} (character {pos})"


def validation_response(exc: RequestValidationError) -> JSONResponse:
    """422 naming the first malformed field, or the position of malformed JSON."""
    raw = list(exc.errors())
    if raw and raw[0].get("type") == "json_invalid":
        loc = raw[0].get("loc", ())
        pos = loc[-1] if loc and isinstance(loc[-1], int) else 0
        doc = exc.body if isinstance(exc.body, str) else ""
        reason = (raw[0].get("ctx") or {}).get("error", "invalid JSON")
        detail = f"malformed JSON at {json_position(doc, pos)}: {reason}"
        fields = [{"field": "body", "message": detail, "type": "json_invalid"}]
        return JSONResponse(
            {"error": "invalid_json", "detail": detail, "fields": fields}, status_code=422
        )
    errors = [
        {"field": _field(e.get("loc", ())), "message": e.get("msg", ""), "type": e.get("type")}
        for e in raw
    ]
    first = errors[0] if errors else {"field": "body", "message": "invalid"}
    detail = f"invalid field '{first['field']}': {first['message']}"
    return JSONResponse(
        {"error": "invalid_request", "detail": detail, "fields": errors}, status_code=422
    )


def install_error_handlers(app: FastAPI) -> None:
    """Map regua errors, validation, framework errors and bugs to ``{error, detail}`` JSON."""

    async def on_regua(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ReguaError)
        return error_response(exc)

    async def on_validation(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return validation_response(exc)

    async def on_http(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = HTTP_CODES.get(exc.status_code, "error" if exc.status_code < 500 else "server_error")
        return JSONResponse(
            {"error": code, "detail": str(exc.detail)},
            status_code=exc.status_code,
            headers=exc.headers,
        )

    async def on_bug(_request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises after this answer, so the server logs the traceback once
        detail = f"internal error ({type(exc).__name__}); the server log has the details"
        return JSONResponse({"error": "internal_error", "detail": detail}, status_code=500)

    app.add_exception_handler(ReguaError, on_regua)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_bug)
