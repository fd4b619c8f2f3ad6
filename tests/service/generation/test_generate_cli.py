"""``regua generate`` (the real CLI, in-process) against ``regua serve`` (a subprocess) that
calls a fake OpenAI server on loopback: three runs with tokens and latency, each with an outcome.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from service.cli import app
from service.server.run import free_port
from tests.helpers.llm_server import Reply, fake_llm_server
from tests.helpers.server import REPO, Served, require_real_rendering

TASK = "pelican-bicycle-structured@1"
SVG = (REPO / "samples/outputs/structured-good.svg").read_text()


def _regua(*args: str, env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **env})


def test_generate_three_repeats_and_wait_for_their_outcomes(tmp_path: Path) -> None:
    require_real_rendering()
    data = tmp_path / "data"
    data.mkdir()
    server = Served(data, REGUA_GENERATION_BACKOFF_S="0.01")
    try:
        with fake_llm_server() as llm:
            llm.script = [Reply(text=f"Here:\n```svg\n{SVG}```\n") for _ in range(3)]
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
        for view in views:
            gen = view["generation"]
            assert view["status"] == "done" and view["model"]["label"] == "m"
            assert view["outcome"]["status"] in {"pass", "fail", "pending"}  # judged, not broken
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


def test_generate_without_a_service_says_what_to_run() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = {"REGUA_URL": url, "REGUA_TOKEN": "rg_x"}
    done = _regua("generate", "--task", TASK, "--api", "mock", "--model", "m", env=env)
    assert done.exit_code == 1
    assert "no regua service answers" in done.stderr and "regua serve" in done.stderr


def test_generate_refuses_zero_repeats_before_calling_the_service() -> None:
    env = {"REGUA_URL": "http://127.0.0.1:9", "REGUA_TOKEN": "rg_x"}
    done = _regua(
        "generate", "--task", TASK, "--api", "mock", "--model", "m", "--repeats", "0", env=env
    )
    assert done.exit_code == 2 and "--repeats" in done.stderr
