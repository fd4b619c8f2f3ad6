"""Starting ``regua serve`` as a real subprocess for end-to-end and crash tests."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from service.client import ReguaClient, read_token
from service.server import free_port, wait_ready

REPO = Path(__file__).resolve().parents[2]


def real_rendering_available() -> str | None:
    """None when the real pipeline can run here, else the reason it cannot."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if not Path("/usr/bin/chromium").exists():
        return "Debian chromium is not installed at /usr/bin/chromium"
    for module in ("checks", "service.rendering", "render.worker", "judges"):
        if importlib.util.find_spec(module) is None:
            return f"module {module} is not available yet"
    return None


def require_real_rendering() -> None:
    """Skip with a clear reason when Chromium, bubblewrap or a stage package is missing."""
    reason = real_rendering_available()
    if reason:
        pytest.skip(reason)


class Served:
    """A ``regua serve`` subprocess on a free port with its own data folder."""

    def __init__(self, data_dir: Path, components: str | None = None, **env: str) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)]
        cmd += ["--data-dir", str(data_dir)]
        if components:
            cmd += ["--components", components]
        full_env = {**os.environ, "PYTHONPATH": str(REPO), "REGUA_RENDER_WORKERS": "2", **env}
        self.log = open(data_dir.parent / f"serve-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env=full_env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_ready(self.url, 60)
        except Exception:
            self.stop()
            raise

    def client(self) -> ReguaClient:
        """A client with the admin token the server wrote on first start."""
        return ReguaClient(self.url, read_token(self.data_dir))

    def kill9(self) -> None:
        """``kill -9`` the server process itself (not its process group)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        """Terminate the server and anything left in its process group."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()
