"""Acceptance of issue 26.3: ``regua generate --revise 2`` (the real CLI, in-process) against
``regua serve``'s own start (on a thread of the test's process, rendering in the session's warm
sandboxed pool: no interpreter or pool start) calling a fake model that fixes its drawing after
seeing a frame: three linked runs; ``regua report`` shows the first-answer pass rate and the
after-feedback pass rates apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from regua.llm.testing import FixesAfterFrame, serving
from sandbox import WorkerPool
from service.api.client import read_token
from service.cli import app
from tests.helpers.api_client import JsonClient
from tests.helpers.httpclient import Http
from tests.helpers.revise import BROKEN, FIXED, TASK, revise_task_yaml
from tests.helpers.server import env_settings, require_real_rendering, serve_here
from tests.helpers.web import web_login

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]


def _regua(*args: str, env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **env})


def test_generate_revise_two_gives_three_linked_runs_reported_apart(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    """Three runs linked round by round (fail, pass, pass), the revision shown on the run page,
    and the report's first-answer figures kept apart from the after-feedback ones."""
    require_real_rendering()
    data, tasks = tmp_path / "data", tmp_path / "tasks"
    data.mkdir()
    tasks.mkdir()
    (tasks / "revise-mini.yaml").write_text(revise_task_yaml(), encoding="utf-8")
    env = {"REGUA_TASKS_DIR": str(tasks), "REGUA_GENERATION_BACKOFF_S": "0.01"}
    with serve_here(env_settings(data, env), render_pool) as url:
        with serving(FixesAfterFrame(BROKEN, FIXED)) as llm:
            env = {"REGUA_URL": url, "REGUA_DATA_DIR": str(data)}
            args = ["--task", TASK, "--api", "openai", "--base-url", f"{llm.url}/v1"]
            done = _regua("generate", *args, "--model", "m", "--revise", "2", "--wait", env=env)
            assert done.exit_code == 0, done.stdout[-3000:] + done.stderr[-3000:]
            assert llm.model.shown[0] == 0 and min(llm.model.shown[1:]) >= 1
        (chain_line,) = [line for line in done.stdout.splitlines() if " -> " in line]
        ids = chain_line.split("  ")[0].split(" -> ")
        assert len(ids) == 3 and "revised 2 time(s)" in chain_line
        with JsonClient(url, read_token(data)) as client:
            views = [client.run(i) for i in ids]
        assert [v["revision"]["round"] for v in views] == [0, 1, 2]
        assert [v["revision"]["revision_of"] for v in views] == [None, ids[0], ids[1]]
        assert all(v["revision"]["chain"] == ids for v in views)
        assert [v["outcome"]["status"] for v in views] == ["fail", "pass", "pass"]
        conversation = views[2]["revision"]["conversation_sha256"]
        assert any(a["sha256"] == conversation for a in views[2]["artifacts"])
        with Http(base_url=url, timeout=60, follow_redirects=True) as http:
            web_login(http, str(read_token(data)))
            page = http.get(f"/runs/{ids[1]}").text
        assert "Render-and-revise: after 1 round of feedback" in page
        assert f'<a href="/runs/{ids[0]}">' in page and f"<strong>{ids[1]}</strong>" in page
        out = tmp_path / "report"
        report = _regua("report", "--task", TASK, "--out", str(out), env=env)
        assert report.exit_code == 0, report.stdout + report.stderr
        text = report.stdout
        assert f"{TASK}  m: pass rate 0 %" in text  # the main table: the first answer alone
        assert "first answer: pass rate 0 % (1 runs)" in text
        assert "after 1 round of feedback: pass rate 100 % (1 runs)" in text
        assert "after 2 rounds of feedback: pass rate 100 % (1 runs)" in text
        assert "rounds to pass: 1: 1" in text
        stored = json.loads((out / "report.json").read_text())
        assert stored["provenance"]["runs"] == 1  # revised runs never pooled into the figures
        assert (out / "revision_chains.csv").read_text().count("\n") == 4  # header + 3 runs
        html = (out / "report.html").read_text()
        assert "Render-and-revise: first answer and after feedback, apart" in html
