"""The long-lived worker that runs *inside* the sandbox.

``python -m sandbox.worker_main --handler module:function`` imports the handler factory, reads the
config message from stdin, calls ``factory(config)`` (which may refuse by raising), answers
``ready`` and then serves jobs until stdin closes. Frames travel on private copies of fd 0 and 1;
fd 1 is then pointed at stderr so that a stray ``print`` cannot corrupt the protocol.
Never imports ``service``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from typing import Any, Protocol

from sandbox.inside import measure
from sandbox.protocol import FrameReader, ProtocolError, encode_message, write_all


class Handler(Protocol):
    """What a handler factory returns."""

    def handle(self, job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
        """Serve one job: JSON result and named binary files."""
        ...

    def close(self) -> None:
        """Release resources (browser, temp files)."""
        ...


def load_factory(spec: str) -> Any:
    """The object named by ``module:function``."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"handler must look like 'module:function', got {spec!r}")
    return getattr(importlib.import_module(module_name), attr)


def _error_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def serve(handler_spec: str, in_fd: int, out_fd: int, max_output_bytes: int | None = None) -> int:
    """Serve the protocol on ``in_fd``/``out_fd``; returns the process exit status."""
    reader = FrameReader(in_fd)
    started = time.monotonic()
    try:
        header, _ = reader.read_message()
    except ProtocolError:
        return 2
    config = header.get("config") or {}
    limit = int(header.get("max_output_bytes") or max_output_bytes or (64 << 20))
    try:
        handler: Handler = load_factory(handler_spec)(config)
    except BaseException as exc:
        message = {"type": "fatal", "error": type(exc).__name__, "detail": _error_text(exc)}
        write_all(out_fd, encode_message(message))
        traceback.print_exc()
        return 3
    ready = {
        "type": "ready",
        "uid": os.getuid(),
        "gid": os.getgid(),
        "pid": os.getpid(),
        "startup_ms": round((time.monotonic() - started) * 1000, 1),
        "inside": measure(),
    }
    write_all(out_fd, encode_message(ready))
    try:
        while True:
            try:
                header, _ = reader.read_message()
            except ProtocolError:
                return 0  # host closed stdin: normal shutdown
            job_id = header.get("id")
            try:
                result, files = handler.handle(header.get("job") or {})
            except Exception as exc:
                traceback.print_exc()
                # a handler error may name its cause and ask the host to retire this worker
                cause = str(getattr(exc, "cause", None) or "handler_error")
                error = {"type": "error", "id": job_id, "cause": cause}
                error.update(error=type(exc).__name__, detail=_error_text(exc))
                error["retire"] = bool(getattr(exc, "retire", False))
                write_all(out_fd, encode_message(error))
                continue
            # a handler that cannot serve again asks to be retired after this answer
            retire = bool(result.pop("retire_worker", False))
            header = {"type": "result", "id": job_id, "result": result, "retire": retire}
            body = encode_message(header, files)
            if len(body) > limit:
                error = {"type": "error", "id": job_id, "cause": "output_too_large"}
                error.update(error="OutputTooLarge", detail=f"{len(body)} bytes > {limit}")
                write_all(out_fd, encode_message(error))
                continue
            write_all(out_fd, body)
            if retire:
                return 0
    finally:
        handler.close()


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m sandbox.worker_main")
    parser.add_argument("--handler", required=True, help="factory as module:function")
    args = parser.parse_args(argv)
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return serve(args.handler, in_fd, out_fd)


if __name__ == "__main__":
    sys.exit(main())
