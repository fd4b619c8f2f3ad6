"""A real local HTTP server speaking the chat-completions and Anthropic messages APIs.

Each test scripts the replies (status, headers, reply text or raw body, delay); the server
records every request (path, headers, JSON body) so tests can inspect what the judge sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted reply. ``text`` is the model's answer; ``body`` overrides the whole body."""

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay_s: float = 0.0


@dataclass
class Recorded:
    """A request as the server saw it."""

    path: str
    headers: dict[str, str]
    raw: str
    json: Any


class FakeLLM:
    """State shared with the handler: scripted replies and recorded requests."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[Recorded] = []
        self.url = ""
        self.lock = threading.Lock()

    def next_reply(self) -> Reply:
        with self.lock:
            return self.script.pop(0) if self.script else Reply(status=500, body="no script")


def _body(path: str, reply: Reply) -> str:
    if reply.body is not None:
        return reply.body
    if path.endswith("/chat/completions"):
        return json.dumps(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text}}],
                "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240},
            }
        )
    return json.dumps(
        {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": reply.text}],
            "usage": {"input_tokens": 1100, "output_tokens": 35},
        }
    )


def _handler(state: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet: the default handler writes every request to stderr

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length).decode()
            try:
                parsed = json.loads(raw)
            except json.JSONDecodeError:
                parsed = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            with state.lock:
                state.requests.append(Recorded(self.path, headers, raw, parsed))
            reply = state.next_reply()
            if reply.delay_s:
                time.sleep(reply.delay_s)
            data = _body(self.path, reply).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


@contextmanager
def fake_llm_server() -> Iterator[FakeLLM]:
    """Run the server on 127.0.0.1 (ephemeral port) in a thread for the duration."""
    state = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    host, port = server.server_address[0], server.server_address[1]
    state.url = f"http://{host!s}:{port}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
