"""An in-process regua service for a laptop: no server to start, the default data folder.

The embedded mode of the integrations starts the whole service (the same one ``regua serve``
runs: storage, the sandboxed renderer, the judges) on a thread of this process, once, and talks
to it through the public client like to any other service. The service is looked up at run
time (``service.server.run``): the integrations and the client need only the floor
(:mod:`regua`), and an installation without the service still imports them.
"""

from __future__ import annotations

import atexit
import importlib
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regua.errors import ConfigurationError
from regua.settings import Settings

_lock = threading.Lock()
_started: dict[Path, Embedded] = {}


@dataclass(frozen=True)
class Embedded:
    """A started in-process service: where it answers and its admin token."""

    url: str
    token: str
    server: Any


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def embedded_service(data_dir: Path | None = None) -> Embedded:
    """The in-process service of ``data_dir`` (default: the settings' data folder), started once.

    It stops when the process exits. Its admin token is the one ``regua serve`` writes on the
    first start in that folder.
    """
    base = Settings()
    folder = (data_dir or base.data_dir).resolve()
    with _lock:
        if folder in _started:
            return _started[folder]
        run = importlib.import_module("service.server.run")
        settings = base.model_copy(
            update={"data_dir": folder, "host": "127.0.0.1", "port": _free_port("127.0.0.1")}
        )
        server = run.BackgroundServer(settings)
        server.start(timeout_s=120.0)
        atexit.register(server.stop)
        try:
            token = (folder / "admin-token").read_text().strip()
        except OSError as exc:
            server.stop()
            raise ConfigurationError(f"the embedded service wrote no admin token: {exc}") from exc
        started = Embedded(url=server.url, token=token, server=server)
        _started[folder] = started
        return started


def stop_embedded(data_dir: Path | None = None) -> None:
    """Stop the in-process service of ``data_dir`` if one was started (tests; else at exit)."""
    folder = (data_dir or Settings().data_dir).resolve()
    with _lock:
        started = _started.pop(folder, None)
    if started is not None:
        started.server.stop()
