"""A real local HTTP server imitating an OpenAI-compatible vision model that answers from a
truth table: for the frames it is shown (known by the sha256 of their PNG bytes) and the
criterion it is asked about, it replies with the status the table holds, else ``uncertain``.

It only ever sees what the judge sends over HTTP (prompt text and images), like a real model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from service.demo.mock_judge import criterion_and_frames

M = TypeVar("M", bound="TruthfulModel")

Truth = Mapping[str, Mapping[str, str]]
"""frame PNG sha256 → criterion id → status."""


@dataclass
class TruthfulModel:
    """What the server knows and what it was asked."""

    truth: dict[str, dict[str, str]] = field(default_factory=dict)
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    """(criterion, frame shas) of every request."""
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: Any) -> str:
        """The reply text for one chat-completions request body."""
        criterion, shas = criterion_and_frames(body)
        with self.lock:
            self.asked.append((criterion, tuple(shas)))
        known = [self.truth[s][criterion] for s in shas if criterion in self.truth.get(s, {})]
        status = known[0] if known else "uncertain"
        return json.dumps(
            {"status": status, "evidence": f"{criterion} looks {status}", "time_s": None}
        )


def _handler(model: TruthfulModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # quiet

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            text = model.answer(json.loads(raw))
            data = json.dumps(
                {
                    "id": "chatcmpl-truthful",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 20},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def serving(model: M) -> Iterator[M]:
    """Serve ``model`` (a :class:`TruthfulModel` or a subclass) on an ephemeral loopback port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    server.daemon_threads = True
    model.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def truthful_model(truth: Truth) -> Iterator[TruthfulModel]:
    """Serve a :class:`TruthfulModel` on an ephemeral loopback port for the duration."""
    with serving(TruthfulModel({k: dict(v) for k, v in truth.items()})) as model:
        yield model
