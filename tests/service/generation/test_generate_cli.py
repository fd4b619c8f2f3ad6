"""``regua generate`` (the real CLI, in-process) against ``regua serve`` (a subprocess) that
calls a fake OpenAI server on loopback: three runs with tokens and latency, each with an outcome.

The replies (an SVG that does not parse, prose, a refusal) each fail by a declared rule, so the
service finishes them without starting the browser (the rendering path is the submit path's,
tested there); what is under test is the generation end to end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from regua.llm.testing import Reply, scripted_server
from service.cli import app
from tests.helpers.server import Served

TASK = "pelican-bicycle-structured@1"
REPLIES = (
    "Here:\n```svg\n<svg xmlns='http://www.w3.org/2000/svg'><g></svg>\n```\n",
    "A pelican riding a bicycle, described in words only.",
    "I'm sorry, but I can't draw that.",
)


def _regua(*args: str, env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **env})


def test_generate_three_repeats_and_wait_for_their_outcomes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = Served(data, REGUA_GENERATION_BACKOFF_S="0.01")
    try:
        with scripted_server() as llm:
            llm.script = [Reply(text=text) for text in REPLIES]
            env = {"REGUA_URL": server.url, "REGUA_DATA_DIR": str(data)}
            args = ["--task", TASK, "--api", "openai", "--base-url", f"{llm.url}/v1"]
            done = _regua("generate", *args, "--model", "m", "--repeats", "3", "--wait", env=env)
            assert done.exit_code == 0, done.output[-3000:]
            assert len(llm.requests) == 3
            assert all(r.json["model"] == "m" for r in llm.requests)
        ids = [line.split()[0] for line in done.stdout.splitlines() if line.endswith("queued")]
        assert len(ids) == 3
        with server.client() as client:
            views = [client.run(i) for i in ids]
        assert sorted(v["generation"]["repeat"] for v in views) == [1, 2, 3]
        raws = {client_raw(server, v) for v in views}
        assert raws == set(REPLIES)  # each reply is its run's raw artifact
        for view in views:
            gen = view["generation"]
            assert view["status"] == "done" and view["model"]["label"] == "m"
            assert view["outcome"]["status"] == "fail"  # by rule: no SVG that parses
            assert (gen["input_tokens"], gen["output_tokens"], gen["attempts"]) == (1200, 40, 1)
            assert gen["latency_ms"] > 0 and gen["cost_usd"] is None and not gen["mock"]
            assert view["outcome"]["status"] in done.stdout and "not available" in done.stdout
        missing = _regua(
            "generate", *args, "--model", "m", "--api-key-env", "REGUA_TEST_NO_SUCH_KEY", env=env
        )
        assert missing.exit_code == 1
        assert "REGUA_TEST_NO_SUCH_KEY is not set" in missing.stderr
        with server.client() as client:
            assert len(client.http.get("/v1/runs").json()["runs"]) == 3  # nothing more stored
    finally:
        server.stop()


def client_raw(server: Served, view: dict[str, Any]) -> str:
    """The text of a run's raw artifact, fetched over the API."""
    raw = next(a for a in view["artifacts"] if a["kind"] == "raw")
    with server.client() as client:
        return client.artifact(raw["sha256"]).text


def test_generate_without_a_service_says_what_to_run(refused_url: str) -> None:
    env = {"REGUA_URL": refused_url, "REGUA_TOKEN": "rg_x"}
    done = _regua("generate", "--task", TASK, "--api", "mock", "--model", "m", env=env)
    assert done.exit_code == 1
    assert "no regua service answers" in done.stderr and "regua serve" in done.stderr


def test_generate_refuses_zero_repeats_before_calling_the_service() -> None:
    env = {"REGUA_URL": "http://127.0.0.1:9", "REGUA_TOKEN": "rg_x"}
    done = _regua(
        "generate", "--task", TASK, "--api", "mock", "--model", "m", "--repeats", "0", env=env
    )
    assert done.exit_code == 2 and "--repeats" in done.stderr
