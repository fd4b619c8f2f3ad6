"""Request bodies: refused above the size limit (413) and, for JSON, when not valid UTF-8 (422).

The body is read here in full (at most ``max_bytes``, declared by ``Content-Length`` or sent
chunked) before the app sees it, then handed on unchanged. Refusing while the app is already
reading (raising from ``receive``) would surface as the framework's 400 "error parsing the body".
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimitMiddleware:
    """Refuse request bodies above ``max_bytes`` with 413, before anything is parsed or stored."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        """Wrap ``app``, refusing bodies larger than ``max_bytes``."""
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the whole body (413 once too large), check it, then pass the request on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _answer(send, 413, "payload_too_large", self._too_large())
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nothing to answer
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await _answer(send, 413, "payload_too_large", self._too_large())
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = _not_utf8(body) if _is_json(headers.get(b"content-type", b"")) else None
        if problem:
            await _answer(send, 422, "invalid_encoding", problem)
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self) -> str:
        return f"request body exceeds {self.max_bytes} bytes"


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";")[0].strip().lower()
    return media == b"application/json" or media.endswith(b"+json")


def _not_utf8(body: bytes) -> str | None:
    """Why ``body`` is not strict UTF-8 (lone surrogates included), or None when it is."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"request body is not valid UTF-8 (byte {exc.start}: {exc.reason})"
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then waits on the real one."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _answer(send: Send, status: int, code: str, detail: str) -> None:
    body = json.dumps({"error": code, "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
