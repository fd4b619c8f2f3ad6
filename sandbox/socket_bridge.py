"""The ``socket`` backend: workers in a separate, network-less container, reached by a Unix socket.

In the Docker deployment (``docker/compose.yaml``) the *renderer container* is the sandbox:
non-root, read-only root, ``network_mode: none``, all capabilities dropped. It runs

    python -m sandbox.socket_bridge --socket /run/regua/render.sock --handler MODULE:FUNC

which, for every connection on the socket (a volume shared only with the worker container),
starts one ``sandbox.worker_main`` whose stdin and stdout *are* the connection, with rlimits set
by ``prlimit``. When the client hangs up (the pool killed the worker after a timeout) the bridge
kills that worker's whole process group; when the worker dies, the bridge closes the connection
so the client sees EOF (a crash). The client side is :class:`SocketBackend`
(``get_backend("socket")``; socket path from ``REGUA_SANDBOX_SOCKET``). The handler is fixed by
the bridge's command line; the pool's ``handler`` argument must name the same one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from regua.errors import SandboxUnavailableError
from sandbox.backend import register_backend
from sandbox.limits import SandboxLimits

DEFAULT_SOCKET = "/run/regua/render.sock"
GRACE_S = 2.0  # after the client hangs up, the worker may finish closing its browser
log = logging.getLogger("regua.sandbox")


class _SocketWriter(io.FileIO):
    """Write side of a connection; ``close()`` half-closes, so the worker sees end of input."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(os.dup(sock.fileno()), "wb")
        self._sock = sock

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)
        super().close()


class SocketProcess:
    """A worker behind the bridge (implements :class:`sandbox.backend.SandboxProcess`)."""

    def __init__(self, sock: socket.socket) -> None:
        """Wrap a connected socket to the bridge as a worker process."""
        self._sock = sock
        self._writer = _SocketWriter(sock)
        self._reader = io.FileIO(os.dup(sock.fileno()), "rb")
        self._status: int | None = None

    @property
    def pid(self) -> int:
        """No host pid: the worker lives in another container."""
        return -1

    @property
    def stdin(self) -> IO[bytes]:
        """The connection, write side."""
        return self._writer

    @property
    def stdout(self) -> IO[bytes]:
        """The connection, read side."""
        return self._reader

    def poll(self) -> int | None:
        """``None`` while the bridge keeps the connection open."""
        if self._status is None:
            try:
                ready, _, _ = select.select([self._sock], [], [], 0)
                if ready and self._sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    self._status = 0
            except OSError:
                self._status = -1
        return self._status

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the bridge to close the connection."""
        ready, _, _ = select.select([self._sock], [], [], timeout)
        status = self.poll() if ready else None
        if status is None:
            raise subprocess.TimeoutExpired("socket worker", timeout or 0)
        return status

    def kill(self) -> None:
        """Hang up; the bridge kills the worker's process group."""
        self._status = -signal.SIGKILL if self._status is None else self._status
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        for stream in (self._writer, self._reader):
            with contextlib.suppress(OSError):
                io.FileIO.close(stream)
        self._sock.close()

    def tree_rss_bytes(self, precise: bool = False) -> int:
        """Unknown from here: the renderer container's memory limit bounds it."""
        del precise  # SandboxProcess protocol; no measurement is possible here
        return 0

    def stderr_tail(self) -> str:
        """The worker's stderr goes to the renderer container's log."""
        return "(see the renderer container's log)"


class SocketBackend:
    """Client side of the bridge (implements :class:`sandbox.backend.SandboxBackend`)."""

    name = "socket"

    def __init__(self, path: str | None = None) -> None:
        """Use the bridge socket at ``path``, else ``$REGUA_SANDBOX_SOCKET``, else the default."""
        self.path = path or os.environ.get("REGUA_SANDBOX_SOCKET", DEFAULT_SOCKET)

    def check(self) -> tuple[bool, str]:
        """The bridge's socket exists."""
        if not os.path.exists(self.path):
            return False, f"no renderer bridge socket at {self.path} (REGUA_SANDBOX_SOCKET)"
        return True, "ok"

    def version(self) -> str:
        """Transport description."""
        return f"unix socket bridge at {self.path}"

    def describe(self) -> dict[str, Any]:
        """Recorded with every result."""
        return {"backend": self.name, "uid": None, "network": "none"}

    def spawn(self, argv: Sequence[str], limits: SandboxLimits) -> SocketProcess:
        """Connect to the bridge (``argv`` and ``limits`` are fixed on the bridge's side)."""
        del argv, limits  # SandboxBackend protocol; the bridge fixes both on its side
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
        except OSError as exc:
            sock.close()
            raise SandboxUnavailableError(f"cannot reach the renderer bridge: {exc}") from exc
        return SocketProcess(sock)


register_backend("socket", SocketBackend)


def serve(path: str, handler: str, limits: SandboxLimits, max_workers: int = 8) -> None:
    """Accept connections on ``path``; one sandboxed worker process per connection."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o660)
    server.listen(max_workers)
    poller = select.poll()
    poller.register(server, select.POLLIN)
    workers: dict[int, tuple[socket.socket, subprocess.Popen[bytes]]] = {}
    hung_up: dict[int, float] = {}  # fd -> when the client hung up (grace before the kill)
    argv = ["prlimit", f"--data={limits.memory_mb << 20}", f"--cpu={limits.cpu_s}"]
    argv += [f"--nproc={limits.max_processes}", f"--nofile={limits.max_open_files}", "--"]
    argv += [sys.executable, "-m", "sandbox.worker_main", "--handler", handler]
    log.info("bridge listening on %s for %s", path, handler)
    while True:
        for fd, events in poller.poll(500):
            if fd == server.fileno():
                conn, _ = server.accept()
                if len(workers) >= max_workers:
                    conn.close()
                    continue
                child = subprocess.Popen(
                    argv, stdin=conn.fileno(), stdout=conn.fileno(), start_new_session=True
                )
                workers[conn.fileno()] = (conn, child)
                poller.register(conn, select.POLLRDHUP | select.POLLHUP)
            elif events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                poller.unregister(fd)  # POLLHUP would be reported on every poll from now on
                hung_up[fd] = time.monotonic()
        for fd, (conn, child) in list(workers.items()):
            late = fd in hung_up and time.monotonic() - hung_up[fd] > GRACE_S
            if child.poll() is not None or late:  # ended, or the client gave up on it
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                if hung_up.pop(fd, None) is None:
                    poller.unregister(fd)
                conn.close()
                del workers[fd]


def main(argv: list[str] | None = None) -> int:
    """``python -m sandbox.socket_bridge --socket PATH --handler MODULE:FUNC``."""
    parser = argparse.ArgumentParser(prog="python -m sandbox.socket_bridge")
    parser.add_argument("--socket", default=DEFAULT_SOCKET)
    parser.add_argument("--handler", required=True)
    parser.add_argument("--memory-mb", type=int, default=4096)
    parser.add_argument("--max-processes", type=int, default=512)
    parser.add_argument("--max-workers", type=int, default=8)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    limits = SandboxLimits(memory_mb=args.memory_mb, max_processes=args.max_processes)
    serve(args.socket, args.handler, limits, args.max_workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
