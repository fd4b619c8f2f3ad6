"""Running the embedded service: API + web pages + in-process executor + render pool."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI

from regua.errors import ConfigurationError
from regua.settings import Settings
from service.access.tokens import ensure_admin_token
from service.api.client import service_answers
from service.context import ServiceContext
from service.server.app import create_app

GRACEFUL_SHUTDOWN_S = 2
"""Seconds open requests get to finish once the server is told to stop."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def prepare(settings: Settings) -> tuple[ServiceContext, FastAPI]:
    """Open storage, create the first admin token if needed, and build the app."""
    ctx = ServiceContext.open(settings)
    token_file = ensure_admin_token(ctx.db, settings.data_dir)
    app = create_app(ctx, run_executor=True)
    app.state.admin_token_file = token_file
    return ctx, app


def serve(settings: Settings, announce: Callable[[str], None]) -> None:
    """Run the embedded service in the foreground until interrupted (SIGINT or SIGTERM).

    On SIGTERM uvicorn stops accepting connections, gives open requests
    :data:`GRACEFUL_SHUTDOWN_S` seconds, then the lifespan closes the context: runs in progress
    are handed back to the queue and the process exits within a few seconds.
    """
    _ctx, app = prepare(settings)
    token_file = app.state.admin_token_file
    if token_file is not None:
        announce(f"created the first admin token; it is in {token_file} (mode 0600)")
    else:
        announce(f"admin token file: {settings.data_dir / 'admin-token'}")
    announce(f"regua serving on http://{settings.host}:{settings.port}/v1 (docs at /v1/docs)")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


class BackgroundServer:
    """The embedded service on a thread (used by ``regua demo`` and ``regua run``)."""

    def __init__(self, settings: Settings) -> None:
        """Prepare the service for ``settings`` (nothing listens until :meth:`start`)."""
        self.settings = settings
        self.ctx, self.app = prepare(settings)
        config = uvicorn.Config(
            self.app,
            host=settings.host,
            port=settings.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="regua-server", daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the service."""
        return f"http://{self.settings.host}:{self.settings.port}"

    def start(self, timeout_s: float = 30.0) -> None:
        """Start and wait until ``/v1/health`` answers."""
        self.thread.start()
        wait_ready(self.url, timeout_s)

    def stop(self) -> None:
        """Ask uvicorn to exit (the lifespan stops the executor and the render pool)."""
        self.server.should_exit = True
        self.thread.join(60)


def wait_ready(url: str, timeout_s: float = 30.0) -> None:
    """Poll ``/v1/health`` until it answers 200."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if service_answers(url):
            return
        time.sleep(0.1)
    raise ConfigurationError(f"service at {url} did not become ready within {timeout_s:g} s")
