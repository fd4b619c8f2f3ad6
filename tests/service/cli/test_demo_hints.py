"""Issue 14 item 17: after ``regua demo`` the user is told how to reach its runs again.

The demo's service stops when the demo ends, so the URLs it used to print answered "connection
refused". Now it says so and how to serve the data folder (or ``--keep`` leaves it up);
``regua status`` against no service names ``regua serve``; ``regua run`` prints the web pages.
The demo runs one sample that needs no render (a refusal), so the tests stay quick.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli import app
from tests.helpers.httpclient import Http
from tests.helpers.server import REPO, Served

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


SAMPLES = REPO / "samples" / "outputs"
RUN_ID = re.compile(r"regua status ([0-9a-f]{32}) ")


class Lines:
    """A subprocess of the CLI whose output is read line by line as it comes."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", *args],
            cwd=REPO,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def until(self, marker: str, timeout_s: float = 240) -> str:
        """Everything printed up to the first line containing ``marker``."""
        deadline = time.monotonic() + timeout_s
        while not any(marker in line for line in self.seen):
            line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "exited early:\n" + "\n".join(self.seen)
            self.seen.append(line)
        return "\n".join(self.seen)

    def wait(self, timeout_s: float = 90) -> int:
        """The exit code, once the process ended and its output is read and closed."""
        code = self.proc.wait(timeout_s)
        self._reader.join(30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code

    def interrupt(self) -> int:
        """Ctrl-C, then the exit code. A process still running 90 s later is killed with its
        process group (its render workers too), so a failed test leaves nothing behind, and the
        wait's timeout is raised."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.wait()
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.wait(30)  # closes its output: no ResourceWarning in a later test
            raise


def _one_sample(tmp_path: Path) -> Path:
    folder = tmp_path / "samples"
    folder.mkdir()
    name = "no-svg-refusal.txt"
    (folder / name).write_text((SAMPLES / name).read_text())
    manifest = [{"file": name, "task": "pelican-bicycle-structured@1", "intent": "fail"}]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_status_without_a_service_says_to_start_one(refused_url: str) -> None:
    """Was only ``error: cannot reach the service: [Errno 111] Connection refused``."""
    url = refused_url
    done = CliRunner().invoke(app, ["status", "0" * 32, "--url", url, "--token", "x"])
    assert done.exit_code == 1
    assert f"no regua service answers at {url}/" in done.output
    assert "regua serve" in done.output and "regua demo --keep" in done.output


def test_demo_says_its_service_stopped_and_how_to_serve_its_data(tmp_path: Path) -> None:
    """The printed ``regua serve --data-dir`` and ``regua status RUN_ID`` really work."""
    data = tmp_path / "demo"
    demo = Lines("demo", "--samples", str(_one_sample(tmp_path)), "--data-dir", str(data))
    printed = demo.until("--keep")
    assert demo.wait(60) == 0, printed
    assert "the demo's service has stopped" in printed
    assert f"regua serve --data-dir {data}" in printed
    found = RUN_ID.search(printed)
    assert found, printed
    run_id = found.group(1)
    assert run_id in printed.split("regua status")[0]  # the summary shows the whole run id
    gone = CliRunner().invoke(app, ["status", run_id, "--data-dir", str(data)])
    assert gone.exit_code == 1 and "regua serve" in gone.output  # nothing on :8000 here
    served = Served(data)
    try:
        shown = CliRunner().invoke(
            app, ["status", run_id, "--data-dir", str(data), "--url", served.url]
        )
        assert shown.exit_code == 0, shown.output
        assert f"run {run_id}" in shown.output and "outcome fail" in shown.output
    finally:
        served.stop()


def test_demo_keep_serves_its_pages_until_ctrl_c(tmp_path: Path) -> None:
    """``--keep``: every printed page answers while the demo waits; Ctrl-C ends it cleanly."""
    data = tmp_path / "demo"
    demo = Lines("demo", "--keep", "--samples", str(_one_sample(tmp_path)), "--data-dir", str(data))
    try:
        printed = demo.until("press Ctrl-C")
        url = re.search(r"stays up at (http://\S+) ", printed)
        assert url, printed
        pages = re.findall(r"^  \S.{8} (http://\S+)", printed, flags=re.MULTILINE)
        assert {p.removeprefix(url.group(1)).split("/")[1] for p in pages} >= {
            "login",
            "runs",
            "review",
            "report",
            "v1",
        }
        token = (data / "admin-token").read_text().strip()
        with Http(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            for page in pages:
                got = http.get(page, follow_redirects=False)
                assert got.status_code in (200, 303), (page, got.status_code)
            run_json = next(p for p in pages if "/v1/runs/" in p)
            assert http.get(run_json).json()["status"] == "done"
    finally:
        assert demo.interrupt() == 0
