"""The CLI against a served instance: token create, submit (with and without waiting), status,
(``regua demo`` end to end: ``test_demo_decisions.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from service.cli import app
from tests.helpers.server import REPO, Served, require_real_rendering

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)

SAMPLES = REPO / "samples" / "outputs"


def _regua(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:

    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run the CLI in-process (the server stays a real subprocess)."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


def test_token_submit_status(tmp_path: Path) -> None:
    """``token create`` makes a submitter token and refuses an unknown role; ``submit --no-wait``
    prints one run id a file; ``submit`` waits and prints each outcome (a rendered structured
    pelican pending review, a refusal failing F1); ``status`` explains a run, and a reviewer
    token is refused it."""
    data = tmp_path / "data"
    data.mkdir()
    require_real_rendering()
    server = Served(data)
    try:
        made = _cli("token", "create", "--role", "submitter", "--data-dir", str(data))
        assert made.exit_code == 0, made.output
        token = made.stdout.strip()
        assert token.startswith("rg_")
        bad = _cli("token", "create", "--role", "king", "--data-dir", str(data))
        assert bad.exit_code == 2 and "unknown role" in bad.output
        env = {"REGUA_URL": server.url, "REGUA_TOKEN": token}
        files = [str(SAMPLES / "structured-good.svg"), str(SAMPLES / "no-svg-refusal.txt")]
        task = ["--task", "pelican-bicycle-structured@1", "--model", "m"]
        quick = _cli("submit", *task, "--no-wait", *files, env=env)
        assert quick.exit_code == 0, quick.output
        run_ids = [line.split()[0] for line in quick.stdout.splitlines()]
        assert len(run_ids) == 2 and all(len(r) == 32 for r in run_ids)
        waited = _cli("submit", *task, *files, env=env)
        assert waited.exit_code == 0, waited.output
        assert "pending" in waited.stdout and "fail" in waited.stdout
        shown = _cli("status", run_ids[1], env=env)
        assert shown.exit_code == 0 and run_ids[1] in shown.stdout and "F1" in shown.stdout
        pending_id = next(ln.split()[0] for ln in waited.stdout.splitlines() if " pending " in ln)
        pending = _cli("status", pending_id, env=env)
        assert "outcome pending" in pending.stdout and "None" not in pending.stdout
        assert "await a human label" in pending.stdout and "regua review" in pending.stdout
        reviewer = _cli("token", "create", "--role", "reviewer", "--data-dir", str(data))
        denied = _cli("status", run_ids[1], env={**env, "REGUA_TOKEN": reviewer.stdout.strip()})
        assert denied.exit_code == 1 and "HTTP 403" in denied.output
    finally:
        server.stop()
