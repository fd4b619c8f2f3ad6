"""The one launcher of a service under test: ``regua serve`` as a subprocess, or an app on a
uvicorn thread, each on a free loopback port and waited on until ``/v1/health`` answers."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from regua.client import ServiceHttp
from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import ensure_admin_token
from service.api.client import read_token
from service.context import ServiceContext
from service.server.app import create_app
from service.server.run import prepare, wait_ready
from tests.helpers.api_client import JsonClient
from tests.helpers.ports import HOST, free_port

REPO = Path(__file__).resolve().parents[2]


def real_rendering_available() -> str | None:
    """None when the real pipeline can run here, else the reason it cannot."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if not Path("/usr/bin/chromium").exists():
        return "Debian chromium is not installed at /usr/bin/chromium"
    return None


def require_real_rendering() -> None:
    """Skip with a clear reason when Chromium or bubblewrap is missing."""
    reason = real_rendering_available()
    if reason:
        pytest.skip(reason)


class Served:
    """``regua serve`` as a subprocess on a free port with its own data folder.

    The service uses the real checker, sandboxed renderer and judges; ``env`` adds settings
    (``REGUA_*``). One render worker unless the caller asks for more.
    """

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)]
        cmd += ["--data-dir", str(data_dir)]
        full_env = {**os.environ, "PYTHONPATH": str(REPO), "REGUA_RENDER_WORKERS": "1", **env}
        self.log_path = data_dir.parent / f"serve-{self.port}.log"
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env=full_env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_ready(self.url, 90)
        except Exception:
            self.stop()
            raise

    def client(self, token: str | None = None) -> JsonClient:
        """A client with ``token`` (default: the admin token written on first start)."""
        return JsonClient(self.url, token or read_token(self.data_dir))

    def output(self) -> str:
        """What the server printed so far."""
        return self.log_path.read_text(errors="replace")

    def kill9(self) -> None:
        """``kill -9`` the server process itself (not its process group)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        """Terminate the server and anything left in its process group."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


def loopback_listener() -> socket.socket:
    """A TCP socket bound to a free loopback port, for a server to listen on.

    Its protocol is named (``IPPROTO_TCP``): asyncio sets ``TCP_NODELAY`` only on accepted
    sockets that carry it, and without it every answer of a served app waited for the client's
    delayed ACK (Nagle): ~45 ms for the smallest request instead of ~2.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))
    return sock


@contextlib.contextmanager
def serve_in_thread(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a thread of this process; yields its base URL.

    The socket is bound (to a port the kernel picks) before the server starts, so no other
    process can take the port in between."""
    sock = loopback_listener()
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"test-server-{port}", daemon=True
    )
    thread.start()
    url = f"http://{HOST}:{port}"
    try:
        wait_ready(url, 30)
        yield url
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def env_settings(data_dir: Path, env: Mapping[str, str]) -> Settings:
    """The settings of ``regua serve --data-dir data_dir`` started as :class:`Served` starts it
    with ``env`` (one render worker unless ``env`` says otherwise; only ``REGUA_*`` variables
    are settings, the rest of the environment is this process's)."""
    values: dict[str, Any] = {"render_workers": "1"}
    values.update((k[6:].lower(), v) for k, v in env.items() if k.startswith("REGUA_"))
    return Settings(**{**values, "data_dir": data_dir})  # --data-dir wins over the environment


@contextlib.contextmanager
def serve_here(settings: Settings, render_pool: WorkerPool | None = None) -> Iterator[str]:
    """``regua serve``'s own start (:func:`service.server.run.prepare`: storage, the first admin
    token, the app whose start resumes or interrupts the generate jobs a killed process left)
    served on a thread of this process; yields its base URL. Leaving stops it as SIGTERM stops
    ``regua serve`` (the app's lifespan closes the context).

    For a server whose process is not what the test is about (one that is never killed): it
    costs no interpreter start and imports, ~3 CPU s a ``regua serve`` subprocess. With
    ``render_pool`` (the session's warm pool) it renders there rather than starting a pool.
    """
    if render_pool is None:
        ctx, app = prepare(settings)
    else:  # prepare()'s steps, on the caller's pool
        ctx = ServiceContext.open(settings, render_pool=render_pool)
        ensure_admin_token(ctx.db, settings.data_dir)
        app = create_app(ctx, run_executor=True)
    try:
        with serve_in_thread(app) as url:
            yield url
    finally:
        ctx.close()  # the lifespan closed it already, unless the app never started


@contextlib.contextmanager
def http_client(app: FastAPI, **headers: str) -> Iterator[ServiceHttp]:
    """An HTTP client of ``app`` served on a uvicorn thread (the service's own client class);
    follows redirects like a browser (pass ``follow_redirects=False`` per request to see one)."""
    with (
        serve_in_thread(app) as url,
        ServiceHttp(base_url=url, headers=headers, follow_redirects=True, timeout=60) as client,
    ):
        yield client
