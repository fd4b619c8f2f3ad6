"""Settings through the real command line: a list setting given comma-separated is honoured by
``regua serve``, and a setting that does not parse stops a command with one line per variable
naming the form it expects (no traceback, nothing stored)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner, Result

from regua.llm.testing import Reply, scripted_server
from service.cli import app
from tests.helpers.server import REPO, Served

TASK = "pelican-bicycle-structured@1"
PROSE = "A pelican riding a bicycle, described in words only."


def _regua(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m service.cli ARGS`` in a fresh process with ``env`` added."""
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


def test_a_setting_that_does_not_parse_is_one_line_per_variable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bad = {
        "REGUA_PORT": "eighty",
        "REGUA_QUEUE": "fast",
        "REGUA_SUBMITTER_QUEUE_SHARE": "2",
        "REGUA_GENERATION_BASE_URLS": "[1,",
        "REGUA_GENERATION_KEY_ENVS": "OPENAI_API_KEY=openai,BAD",
    }
    done = _regua("token", "create", "--role", "submitter", "--data-dir", str(data), env=bad)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: REGUA_PORT='eighty': expected a whole number",
        "REGUA_SUBMITTER_QUEUE_SHARE='2': expected a number greater than 0 and at most 1",
        "REGUA_QUEUE='fast': expected one of auto, embedded, procrastinate",
        "REGUA_GENERATION_BASE_URLS='[1,': expected a comma-separated list (a,b) or a JSON list",
        "REGUA_GENERATION_KEY_ENVS='OPENAI_API_KEY=openai,BAD': key binding 'BAD' is not of the "
        "form VAR=API or VAR=API@BASE_URL (e.g. OPENAI_API_KEY=openai, "
        "VLLM_KEY=openai@http://gpu:8000/v1)",
    ]
    assert not data.exists()  # no database, no secret, no token was made


def test_only_the_setting_that_does_not_parse_is_reported() -> None:
    done = _regua("judges", "list", env={"REGUA_JUDGE_API_KEY": "sk-1", "REGUA_PORT": "sk-2"})
    assert done.returncode == 2
    assert done.stderr == "error: REGUA_PORT='sk-2': expected a whole number\n"
    assert "sk-1" not in done.stderr and "Traceback" not in done.stderr


def test_a_comma_separated_list_setting_is_honoured_by_the_service(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with scripted_server() as llm:
        listed = f"{llm.url}/v1"
        server = Served(data, REGUA_GENERATION_BASE_URLS=f"http://127.0.0.1:9/v1, {listed}")
        try:
            made = _cli("token", "create", "--role", "submitter", "--data-dir", str(data))
            assert made.exit_code == 0, made.output
            env = {"REGUA_URL": server.url, "REGUA_TOKEN": made.stdout.strip()}
            args = ["generate", "--task", TASK, "--api", "openai", "--model", "m"]
            llm.script = [Reply(text=PROSE)]
            allowed = _cli(*args, "--base-url", listed, env=env)
            assert allowed.exit_code == 0, allowed.output[-3000:]
            assert [r.path for r in llm.requests] == ["/v1/chat/completions"]
            refused = _cli(*args, "--base-url", "http://127.0.0.1:8/v1", env=env)
            assert refused.exit_code == 1
            assert "REGUA_GENERATION_BASE_URLS" in refused.stderr
            assert len(llm.requests) == 1  # the refused base URL was never called
            with server.client() as client:
                runs = client.http.get("/v1/runs").json()["runs"]
            assert len(runs) == 1  # only the allowed generation stored a run
        finally:
            server.stop()
