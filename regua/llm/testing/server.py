"""A fake model server: real, threaded, local, speaking OpenAI's and Anthropic's APIs.

It answers the chat-completions and messages endpoints with a pluggable :data:`Answerer`.
It sees only what a model server sees (the path, headers and JSON body) and records every
request, so a test can check what was sent; the demo's mock judge runs on it too.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

from regua.llm.call import Image, Part, Text

DEFAULT_USAGE = {"openai": (1200, 40), "anthropic": (1100, 35)}
"""Tokens a reply reports when its answerer names none."""


@dataclass
class Reply:
    """One answer: the model's ``text`` (wrapped in the API's envelope) or a whole ``body``."""

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay_s: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Request:
    """A request as the server saw it (headers lower-cased)."""

    path: str
    headers: dict[str, str]
    raw: str
    json: Any
    received_at: float
    """``time.monotonic()`` when it arrived."""

    @property
    def api(self) -> str:
        """``anthropic`` for ``…/messages``, else ``openai``."""
        return "anthropic" if self.path.rstrip("/").endswith("/messages") else "openai"

    def parts(self) -> list[Part]:
        """Every text and image sent, in order (the system text first), from either API."""
        body = self.json if isinstance(self.json, dict) else {}
        found: list[Part] = []
        if isinstance(body.get("system"), str):
            found.append(Text(body["system"]))
        for message in body.get("messages") or []:
            content = message.get("content")
            items = content if isinstance(content, list) else [{"type": "text", "text": content}]
            found += [p for p in (_part(item) for item in items) if p is not None]
        return found

    def texts(self) -> list[str]:
        """The text parts."""
        return [p.text for p in self.parts() if isinstance(p, Text)]

    def images(self) -> list[bytes]:
        """The image parts' bytes."""
        return [p.data for p in self.parts() if isinstance(p, Image)]


def _part(item: Any) -> Part | None:
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "text":
        return Text(str(item.get("text")))
    if kind == "image_url":
        url = str(item["image_url"]["url"])
        head, _, data = url.partition(",")
        media = head.removeprefix("data:").split(";")[0] or "image/png"
        return Image(base64.b64decode(data), media)
    if kind == "image":
        source = item["source"]
        return Image(base64.b64decode(source["data"]), str(source.get("media_type")))
    return None


Answerer = Callable[[Request], Reply]
"""Turns one request into one reply (:mod:`regua.llm.testing.answerers` has the usual ones)."""


def envelope(api: str, reply: Reply, model: str = "regua-fake") -> str:
    """The API's response body carrying ``reply.text`` and its token counts."""
    default_in, default_out = DEFAULT_USAGE.get(api, DEFAULT_USAGE["openai"])
    tokens_in = default_in if reply.input_tokens is None else reply.input_tokens
    tokens_out = default_out if reply.output_tokens is None else reply.output_tokens
    if api == "anthropic":
        doc: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    else:
        message = {"role": "assistant", "content": reply.text}
        doc = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }
    return json.dumps(doc)


A = TypeVar("A", bound=Answerer)


class FakeModelServer(Generic[A]):
    """The server on an ephemeral loopback port; ``requests`` lists what it was sent.

    ``model`` is its answerer (the fake model), with whatever state that keeps.
    """

    def __init__(self, model: A, *, name: str = "regua-fake-model") -> None:
        """Bind the port (nothing is answered until :meth:`start`); ``name`` is the model's."""
        self.model = model
        self.name = name
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        """The most requests it was answering at once."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=name, daemon=True
        )

    def start(self) -> Self:
        """Start answering; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def _enter(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def _read(handler: BaseHTTPRequestHandler) -> Request:
    raw = handler.rfile.read(int(handler.headers.get("content-length", "0"))).decode()
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        parsed = None
    headers = {k.lower(): v for k, v in handler.headers.items()}
    return Request(handler.path, headers, raw, parsed, time.monotonic())


BAD_REQUEST = Reply(status=400, body='{"error": {"message": "not a model API request"}}')


def _answer(server: FakeModelServer[Any], request: Request) -> Reply:
    """The answerer's reply; a body that is no request is a 400, as a real API answers."""
    if not isinstance(request.json, dict):
        return BAD_REQUEST
    try:
        reply: Reply = server.model(request)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return BAD_REQUEST
    return reply


def _handler(server: FakeModelServer[Any]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections, like a real API
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet: the default handler writes every request to stderr

        def do_POST(self) -> None:
            request = _read(self)
            server._enter(request)
            try:
                reply = _answer(server, request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body
                if body is None:
                    body = envelope(request.api, reply, server.name)
                self._send(reply, body.encode())
            finally:
                server._leave()

        def _send(self, reply: Reply, data: bytes) -> None:
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (its timeout)

    return Handler


@contextmanager
def serving(model: A) -> Iterator[FakeModelServer[A]]:
    """Run a :class:`FakeModelServer` answering with ``model`` for the duration."""
    server = FakeModelServer(model).start()
    try:
        yield server
    finally:
        server.stop()
