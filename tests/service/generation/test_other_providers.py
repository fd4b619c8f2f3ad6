"""The Anthropic messages API, the mock provider, prices, and resuming by case key."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.errors import ConfigurationError, GenerationSetupError, InputError, UnknownTaskError
from regua.llm.testing import Reply, ScriptedServer
from service.context import ServiceContext
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs
from service.storage import GenerationRow, Run
from tests.service.generation.helpers import openai_body, stored

TASK = "pelican-bicycle-structured@1"


def _anthropic(content: list[dict[str, str]], stop: str) -> str:
    usage = {"input_tokens": 1100, "output_tokens": 35}
    return json.dumps({"content": content, "stop_reason": stop, "usage": usage})


def test_anthropic_reply_refusal_and_429(
    gen_ctx: ServiceContext, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEN_TEST_ANTHROPIC", "ak-secret")
    params = GenerationParams(
        api="anthropic",
        model="claude-x",
        base_url=f"{llm.url}/v1",
        api_key_env="GEN_TEST_ANTHROPIC",
    )
    text = [{"type": "text", "text": "```svg\n<svg/>\n"}, {"type": "text", "text": "```"}]
    busy = Reply(status=429, headers={"Retry-After": "0"}, body='{"error": {"message": "x"}}')
    llm.script = [busy, Reply(body=_anthropic(text, "end_turn"))]
    (ok,) = generate_runs(gen_ctx, TASK, params, 1, token_id=None)
    got = stored(gen_ctx, ok)
    assert got.raw == "```svg\n<svg/>\n```"
    g = got.generation
    assert (g.input_tokens, g.output_tokens, g.finish_reason, g.attempts) == (
        1100,
        35,
        "end_turn",
        2,
    )
    assert g.params["max_tokens"] == 4096  # the API requires it; the default sent is recorded
    sent = llm.requests[-1]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == "ak-secret"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    llm.script = [Reply(body=_anthropic([], "refusal"))]
    (refused,) = generate_runs(gen_ctx, TASK, params, 1, token_id=None)
    r = stored(gen_ctx, refused)
    assert r.raw == "" and r.generation.refusal and r.generation.cause is None


def test_mock_is_deterministic_marked_and_never_priced(
    gen_ctx: ServiceContext, tmp_path: Path
) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text(
        "version: v1\nprices:\n  mock:\n    m: {input_per_million: 1, output_per_million: 1}\n"
    )
    gen_ctx.settings = gen_ctx.settings.model_copy(update={"price_table": table})
    params = GenerationParams(api="mock", model="m")
    first = generate_runs(gen_ctx, TASK, params, 6, token_id=None)
    again = generate_runs(gen_ctx, TASK, params, 6, token_id=None)
    replies = [stored(gen_ctx, i) for i in first]
    assert [r.raw for r in replies] == [stored(gen_ctx, i).raw for i in again]
    assert len({r.raw for r in replies}) > 1  # several bundled replies, not one
    for r in replies:
        assert r.label == "mock:m" and r.provider == "mock" and r.params["mock"] is True
        assert r.generation.mock and r.generation.cost_usd is None


def test_price_table_gives_a_cost_and_an_unknown_model_none(
    gen_ctx: ServiceContext, llm: ScriptedServer, tmp_path: Path
) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text(
        "version: 2026-12-01\nprices:\n  openai:\n"
        "    priced: {input_per_million: 2.5, output_per_million: 10}\n"
    )
    gen_ctx.settings = gen_ctx.settings.model_copy(update={"price_table": table})
    base = f"{llm.url}/v1"
    llm.script = [Reply(body=openai_body("x")), Reply(body=openai_body("y"))]
    (priced,) = generate_runs(
        gen_ctx,
        TASK,
        GenerationParams(api="openai", model="priced", base_url=base),
        1,
        token_id=None,
    )
    (unpriced,) = generate_runs(
        gen_ctx,
        TASK,
        GenerationParams(api="openai", model="other", base_url=base),
        1,
        token_id=None,
    )
    p = stored(gen_ctx, priced).generation
    assert p.cost_usd == pytest.approx((1200 * 2.5 + 40 * 10) / 1e6)
    assert p.price_table_version == "2026-12-01"
    u = stored(gen_ctx, unpriced).generation
    assert u.cost_usd is None and u.price_table_version == "2026-12-01"
    table.write_text("version: v2\nprices: {openai: {priced: {input_per_million: -1}}}\n")
    with pytest.raises(ConfigurationError, match="not a price table"):
        generate_runs(
            gen_ctx,
            TASK,
            GenerationParams(api="openai", model="priced", base_url=base),
            1,
            token_id=None,
        )


def test_case_keys_resume_without_calling_again(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    params = GenerationParams(api="openai", model="m", base_url=f"{llm.url}/v1")
    llm.script = [Reply(body=openai_body("a")), Reply(body=openai_body("b"))]
    first = generate_runs(gen_ctx, TASK, params, 2, token_id=None, case_keys=["k1", "k2"])
    llm.script = [Reply(body=openai_body("c"))]
    seen: list[tuple[int, int]] = []
    resumed = generate_runs(
        gen_ctx,
        TASK,
        params,
        3,
        token_id=None,
        case_keys=["k1", "k2", "k3"],
        on_progress=lambda d, t: seen.append((d, t)),
    )
    assert resumed[:2] == first and len(llm.requests) == 3  # one new call only
    assert stored(gen_ctx, resumed[2]).raw == "c" and seen == [(2, 3), (3, 3)]
    with gen_ctx.db.read() as s:
        keys = sorted(str(k) for k in s.scalars(select(GenerationRow.case_key)))

    assert keys == ["k1", "k2", "k3"]


def test_bad_requests_are_refused_before_any_call_or_row(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    params = GenerationParams(api="openai", model="m", base_url=f"{llm.url}/v1")
    with pytest.raises(GenerationSetupError, match="GEN_TEST_UNSET is not set"):
        generate_runs(
            gen_ctx,
            TASK,
            params.model_copy(update={"api_key_env": "GEN_TEST_UNSET"}),
            1,
            token_id=None,
        )
    with pytest.raises(UnknownTaskError):
        generate_runs(gen_ctx, "no-such@1", params, 1, token_id=None)
    with pytest.raises(InputError, match="case keys"):
        generate_runs(gen_ctx, TASK, params, 2, token_id=None, case_keys=["only-one"])
    with pytest.raises(InputError, match="1 to 200 characters"):
        generate_runs(gen_ctx, TASK, params, 1, token_id=None, case_keys=["k" * 201])
    with pytest.raises(InputError, match="at least 1"):
        generate_runs(gen_ctx, TASK, params, 0, token_id=None)
    with gen_ctx.db.read() as s:
        assert s.query(Run).count() == 0
    assert llm.requests == []


def test_concurrency_and_rate_per_provider_are_settings(
    gen_ctx: ServiceContext, llm: ScriptedServer
) -> None:
    gen_ctx.settings = gen_ctx.settings.model_copy(update={"generation_concurrency": 2})
    llm.script = [Reply(body=openai_body("x"), delay_s=0.25) for _ in range(4)]
    params = GenerationParams(api="openai", model="m", base_url=f"{llm.url}/v1")
    t0 = time.monotonic()
    assert len(generate_runs(gen_ctx, TASK, params, 4, token_id=None)) == 4
    assert time.monotonic() - t0 >= 0.5  # two at a time: two waves of 0.25 s (four: one)
    gen_ctx.settings = gen_ctx.settings.model_copy(update={"generation_rate_per_minute": 600.0})
    t0 = time.monotonic()
    generate_runs(gen_ctx, TASK, GenerationParams(api="mock", model="m"), 4, token_id=None)
    assert time.monotonic() - t0 >= 0.3  # 600 a minute: 0.1 s apart
