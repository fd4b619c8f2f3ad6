"""Generating through a real loopback server speaking the OpenAI chat API: what is stored.

Each case scripts the server (fenced SVG, prose, refusal, 429 with Retry-After, 500, a reply
slower than the timeout) and reads back the run: raw reply, tokens, latency, attempts, cause.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from regua.llm.testing import Reply, ScriptedServer
from service.context import ServiceContext
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs
from tests.service.conftest import drain
from tests.service.generation.helpers import openai_body, stored

TASK = "pelican-bicycle-structured@1"
SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
FENCED = f"Here you go.\n\n```svg\n{SVG}```\n"


def _params(llm: ScriptedServer, **extra: object) -> GenerationParams:
    return GenerationParams.model_validate(
        {"api": "openai", "base_url": f"{llm.url}/v1", "model": "m", **extra}
    )


def _outcome(ctx: ServiceContext, run_id: str) -> tuple[str | None, str | None]:
    from service.storage import Evaluation, Run

    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.status == "done"
        ev = s.get(Evaluation, run.current_evaluation_id)
        assert ev is not None
        return ev.outcome, ev.cause


def test_fenced_svg_reply_is_the_raw_artifact_with_tokens_latency_and_params(
    gen_ctx: ServiceContext, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEN_TEST_KEY", "sk-secret-123")
    llm.script = [Reply(body=openai_body(FENCED))]
    params = _params(llm, temperature=0.7, max_tokens=900, api_key_env="GEN_TEST_KEY", label="L")
    (run_id,) = generate_runs(gen_ctx, TASK, params, 1, token_id=None)
    got = stored(gen_ctx, run_id)
    assert got.raw == FENCED
    host = llm.url.split("//", 1)[1]  # a local OpenAI-compatible server is its own provider
    assert (got.label, got.provider) == ("L", host) and host.startswith("127.0.0.1:")
    g = got.generation
    assert (g.input_tokens, g.output_tokens, g.attempts, g.finish_reason) == (1200, 40, 1, "stop")
    assert g.latency_ms is not None and g.latency_ms > 0 and g.cause is None and not g.timed_out
    assert g.cost_usd is None and g.price_table_version is None  # no price table: not available
    assert g.params["temperature"] == 0.7 and g.params["max_tokens"] == 900
    assert g.params["mock"] is False and g.repeat == 1
    (sent,) = llm.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-secret-123"
    task_prompt = gen_ctx.registry.get(TASK).prompt
    assert sent.json["messages"] == [{"role": "user", "content": task_prompt}]
    assert sent.json["temperature"] == 0.7 and sent.json["max_tokens"] == 900
    db_file = gen_ctx.settings.data_dir / "regua.sqlite3"
    assert b"sk-secret-123" not in db_file.read_bytes()  # the key is never stored


def test_the_provider_is_what_the_user_says_else_the_base_url_host(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    llm.script = [Reply(body=openai_body(FENCED)), Reply(body=openai_body(FENCED))]
    (named,) = generate_runs(gen_ctx, TASK, _params(llm, provider="acme-lab"), 1, token_id=None)
    (derived,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    assert stored(gen_ctx, named).provider == "acme-lab"
    assert stored(gen_ctx, derived).provider == llm.url.split("//", 1)[1]
    assert GenerationParams(api="anthropic", model="m").vendor() == "anthropic"  # no base URL
    remote = GenerationParams(api="openai", model="m", base_url="https://API.Example.com/v1")
    assert remote.vendor() == "api.example.com"
    vendor = GenerationParams(api="openai", model="m", base_url="https://api.openai.com/v1")
    assert vendor.vendor() == "openai"


def test_refusal_and_prose_are_replies_that_fail_by_rule(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    llm.script = [Reply(body=openai_body(None, refusal="I can't help with that."))]
    (refused,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    llm.script = [Reply(body=openai_body("A pelican on a bicycle, in words only."))]
    (prose,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    r = stored(gen_ctx, refused)
    assert r.raw == "I can't help with that." and r.generation.refusal
    assert r.generation.cause is None and r.generation.attempts == 1
    p = stored(gen_ctx, prose)
    assert p.raw.startswith("A pelican") and not p.generation.refusal
    drain(gen_ctx)
    assert _outcome(gen_ctx, refused)[0] == "fail"
    assert _outcome(gen_ctx, prose)[0] == "fail"


def test_429_with_retry_after_is_waited_out_and_counted(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    busy = Reply(status=429, headers={"Retry-After": "0.3"}, body='{"error": {"message": "slow"}}')
    llm.script = [busy, Reply(body=openai_body(FENCED))]
    t0 = time.monotonic()
    (run_id,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    assert time.monotonic() - t0 >= 0.3  # the server's Retry-After, not the 10 ms backoff
    g = stored(gen_ctx, run_id).generation
    assert g.attempts == 2 and g.cause is None and g.output_tokens == 40
    assert g.elapsed_ms is not None and g.elapsed_ms >= 300


def test_500_on_every_attempt_stores_an_incomplete_run_with_the_cause(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    llm.script = [Reply(status=500, body='{"error": {"message": "boom"}}')] * 3
    (run_id,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    got = stored(gen_ctx, run_id)
    assert got.raw == ""  # nothing was replied
    g = got.generation
    assert g.attempts == 3 and g.cause == "http_500: boom" and g.input_tokens is None
    assert len(llm.requests) == 3
    drain(gen_ctx)
    outcome, cause = _outcome(gen_ctx, run_id)
    assert outcome == "incomplete"
    assert cause is not None and "generation_failed: http_500: boom" in cause


def test_a_400_is_not_retried(gen_ctx: ServiceContext, llm: ScriptedServer) -> None:
    llm.script = [Reply(status=400, body='{"error": {"message": "bad model"}}')]
    (run_id,) = generate_runs(gen_ctx, TASK, _params(llm), 1, token_id=None)
    g = stored(gen_ctx, run_id).generation
    assert (g.attempts, g.cause, len(llm.requests)) == (1, "http_400: bad model", 1)


def test_a_reply_slower_than_the_timeout_is_timed_out(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    llm.script = [Reply(body=openai_body(FENCED), delay_s=1.0)] * 3
    params = _params(llm, timeout_s=0.3)
    (run_id,) = generate_runs(gen_ctx, TASK, params, 1, token_id=None)
    g = stored(gen_ctx, run_id).generation
    assert g.timed_out and g.attempts == 3
    assert g.cause == "timeout: no answer within 0.3 s"
    assert g.elapsed_ms is not None and g.elapsed_ms >= 900
