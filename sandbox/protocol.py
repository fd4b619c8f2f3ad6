"""The wire protocol between host and worker: length-prefixed frames on a pair of pipes.

A frame is one kind byte (``J`` = UTF-8 JSON object, ``B`` = binary), a 4-byte big-endian
payload length, then the payload. A message is one ``J`` frame (the header); when the header
has ``"files": [{"name", "size"}, ...]`` exactly that many ``B`` frames follow, in order.

Messages host → worker: ``{"type": "config", "config": {...}}`` once, then
``{"type": "job", "id": n, "job": {...}}``. Worker → host: ``{"type": "ready", ...}`` or
``{"type": "fatal", "error", "detail"}`` after the config, then per job
``{"type": "result", "id", "result", "files"}`` (+ ``B`` frames) or
``{"type": "error", "id", "cause", "error", "detail"}``.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from collections.abc import Callable
from typing import Any

from regua.errors import SandboxError

HEADER = struct.Struct(">cI")
KIND_JSON = b"J"
KIND_BINARY = b"B"
MAX_HEADER_BYTES = 16 * 1024 * 1024


class ProtocolError(SandboxError):
    """The peer sent something that is not a valid frame (or closed the pipe mid-message)."""


class PeerClosedError(ProtocolError):
    """The peer closed its end (for a worker: it died) before a whole message arrived."""


class FrameTimeoutError(SandboxError):
    """The deadline passed before a whole frame arrived."""


class FrameTooLargeError(SandboxError):
    """A frame (or a whole message) is larger than the receiver accepts."""


def encode_frame(kind: bytes, payload: bytes) -> bytes:
    """Bytes of one frame."""
    return HEADER.pack(kind, len(payload)) + payload


def encode_message(header: dict[str, Any], files: dict[str, bytes] | None = None) -> bytes:
    """Bytes of one message: a JSON header frame plus one binary frame per file."""
    files = files or {}
    if files:
        header = {**header, "files": [{"name": n, "size": len(b)} for n, b in files.items()]}
    body = json.dumps(header, separators=(",", ":")).encode()
    parts = [encode_frame(KIND_JSON, body)]
    parts.extend(encode_frame(KIND_BINARY, data) for data in files.values())
    return b"".join(parts)


def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write every byte to ``fd``; with a ``deadline`` a peer that stops reading cannot block us."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise FrameTimeoutError("deadline passed while the worker was not reading")
            _, ready, _ = select.select([], [fd], [], min(wait, 0.25))
            if not ready:
                continue
            written = os.write(fd, view[: select.PIPE_BUF])
        else:
            written = os.write(fd, view)
        view = view[written:]


class FrameReader:
    """Reads frames from a file descriptor, optionally under a deadline (``time.monotonic``)."""

    def __init__(
        self, fd: int, tick: Callable[[], None] | None = None, tick_s: float = 0.25
    ) -> None:
        """Read frames from ``fd``; ``tick`` runs about every ``tick_s`` while waiting."""
        self.fd = fd
        self.tick = tick  # called about every tick_s while waiting (e.g. a memory watchdog)
        self.tick_s = tick_s

    def _read_exact(self, size: int, deadline: float | None) -> bytes:
        chunks: list[bytes] = []
        remaining = size
        while remaining:
            if deadline is not None or self.tick is not None:
                wait = self.tick_s if deadline is None else deadline - time.monotonic()
                if wait <= 0:
                    raise FrameTimeoutError("deadline passed while waiting for the worker")
                ready, _, _ = select.select([self.fd], [], [], min(wait, self.tick_s))
                if not ready:
                    if self.tick is not None:
                        self.tick()
                    continue
            chunk = os.read(self.fd, min(remaining, 1 << 20))
            if not chunk:
                raise PeerClosedError(f"pipe closed with {remaining} of {size} bytes missing")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def read_frame(
        self, deadline: float | None = None, max_bytes: int = 1 << 31
    ) -> tuple[bytes, bytes]:
        """One ``(kind, payload)``; refuses frames longer than ``max_bytes``."""
        kind, size = HEADER.unpack(self._read_exact(HEADER.size, deadline))
        if kind not in (KIND_JSON, KIND_BINARY):
            raise ProtocolError(f"unknown frame kind {kind!r}")
        if size > max_bytes:
            raise FrameTooLargeError(f"frame of {size} bytes exceeds the cap of {max_bytes} bytes")
        return kind, self._read_exact(size, deadline)

    def read_message(
        self, deadline: float | None = None, max_bytes: int = 1 << 31
    ) -> tuple[dict[str, Any], dict[str, bytes]]:
        """One header plus its files; ``max_bytes`` caps the total size of the message."""
        kind, payload = self.read_frame(deadline, min(max_bytes, MAX_HEADER_BYTES))
        if kind != KIND_JSON:
            raise ProtocolError("expected a JSON header frame")
        try:
            header = json.loads(payload)
        except ValueError as exc:
            raise ProtocolError(f"header is not JSON: {exc}") from exc
        if not isinstance(header, dict):
            raise ProtocolError("header is not a JSON object")
        specs = header.pop("files", None) or []
        if not isinstance(specs, list):
            raise ProtocolError("'files' is not a list")
        budget = max_bytes - len(payload)
        declared = sum(int(s.get("size", 0)) for s in specs if isinstance(s, dict))
        if declared > budget:
            raise FrameTooLargeError(
                f"message declares {declared + len(payload)} bytes; the cap is {max_bytes} bytes"
            )
        files: dict[str, bytes] = {}
        for spec in specs:
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                raise ProtocolError(f"bad file spec {spec!r}")
            kind, data = self.read_frame(deadline, budget)
            if kind != KIND_BINARY or len(data) != spec.get("size"):
                raise ProtocolError(f"file frame for {spec['name']!r} does not match its spec")
            budget -= len(data)
            files[spec["name"]] = data
        return header, files
