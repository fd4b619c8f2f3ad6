"""Vision judges on panels, against real local HTTP servers speaking both APIs (no patching).

``REGUA_JUDGE_BASE_URL`` with or without ``/v1`` for both APIs; several vision judges declared in
one judge file, each with its own endpoint, key and prompt, on one panel; and a judge kept off
work of its own provider when the panel says so.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

import judges
from judges import CheckSummary, EvalInput, JudgeInput, RenderSummary, Verdict
from judges.judge_files import register_files
from judges.vision.templates import LENIENT_RULE, STRICT_RULE
from regua.llm.testing import Reply, ScriptedServer, scripted_server
from regua.settings import Settings
from tasks import bundled_registry
from tests.judges.vision.test_vision_llm import FRAMES

TASK = bundled_registry().get("pelican-bicycle-structured@2")


def answer(status: str) -> Reply:
    return Reply(json.dumps({"status": status, "evidence": "seen", "time_s": 0.0}))


@pytest.fixture()
def server_a() -> Iterator[ScriptedServer]:
    with scripted_server() as state:
        yield state


@pytest.fixture()
def server_b() -> Iterator[ScriptedServer]:
    with scripted_server() as state:
        yield state


PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_judge_base_url_with_or_without_v1_reaches_the_api(
    server_a: ScriptedServer, api: str, suffix: str
) -> None:
    """What the user sets as REGUA_JUDGE_BASE_URL; what the server sees is one ``/v1``."""
    server_a.script = [answer("pass")]
    conf = Settings(judge_base_url=server_a.url + suffix, judge_model="m-1", judge_api_key="k")
    judge = judges.create_judge(f"vision-llm-{api}@1", conf)
    result = judge.judge(JudgeInput(TASK, TASK.criterion("P1"), FRAMES))
    assert isinstance(result, Verdict) and result.status == "pass", result
    assert [r.path for r in server_a.requests] == [PATHS[api]]
    assert server_a.requests[0].json["model"] == "m-1"


def three_judges(tag: str, url_a: str, url_b: str) -> str:
    """Three vision judges: two models on endpoint A (strict and lenient prompts, one key), one
    Anthropic model on endpoint B with its own key; each declares its provider."""
    return f"""
profiles:
  - {{id: {tag}-strict@1, kind: vision-llm, api: openai, model: gpt-a, base_url: "{url_a}/v1",
     api_key_env: {tag}_KEY_A, provider: openai, prompt_version: criterion-json-strict@1}}
  - {{id: {tag}-lenient@1, kind: vision-llm, api: openai, model: open-b, base_url: "{url_a}",
     api_key_env: {tag}_KEY_A, provider: meta, prompt_version: criterion-json-lenient@1}}
  - {{id: {tag}-claude@1, kind: vision-llm, api: anthropic, model: claude-c, base_url: "{url_b}",
     api_key_env: {tag}_KEY_B, provider: anthropic}}
panels:
  - id: {tag}-three@1
    family: pelican-bicycle
    exclude_own_provider: true
    assignments: {{P1: [{tag}-strict@1, {tag}-lenient@1, {tag}-claude@1]}}
  - id: {tag}-three-all@1
    family: pelican-bicycle
    assignments: {{P1: [{tag}-strict@1, {tag}-lenient@1, {tag}-claude@1]}}
"""


@pytest.fixture()
def tag(monkeypatch: pytest.MonkeyPatch) -> str:
    stem = f"t{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(f"{stem}_KEY_A", "sk-endpoint-a")
    monkeypatch.setenv(f"{stem}_KEY_B", "sk-endpoint-b")
    return stem


def _declare(tag: str, a: ScriptedServer, b: ScriptedServer) -> None:
    register_files([judges.parse_judge_text(three_judges(tag, a.url, b.url), "three.yaml")])


def _ask(tag: str, panel: str, provider: str | None) -> judges.PanelResult:
    inp = EvalInput(TASK, CheckSummary("pass", True), RenderSummary(status="ok"), FRAMES)
    if provider is not None:
        inp = EvalInput(inp.task, inp.checks, inp.render, inp.frames, provider=provider)
    everyone = {(f"{tag}-{n}@1", "P1"): True for n in ("strict", "lenient", "claude")}
    return judges.evaluate(inp, judges.get_panel(panel), everyone, settings=Settings())


def test_several_vision_judges_each_with_its_own_endpoint_key_and_prompt(
    tag: str, server_a: ScriptedServer, server_b: ScriptedServer
) -> None:
    _declare(tag, server_a, server_b)
    server_a.script = [answer("fail"), answer("fail")]
    server_b.script = [answer("fail")]
    result = _ask(tag, f"{tag}-three@1", provider="acme")
    assert sorted(v.judge_profile_id for v in result.verdicts) == sorted(
        [f"{tag}-strict@1", f"{tag}-lenient@1", f"{tag}-claude@1"]
    )
    assert result.criterion("P1").status == "fail"
    by_model = {r.json["model"]: r for r in server_a.requests}
    assert set(by_model) == {"gpt-a", "open-b"}
    for r in server_a.requests:
        assert r.path == "/v1/chat/completions"
        assert r.headers["authorization"] == "Bearer sk-endpoint-a"
    system = {m: r.json["messages"][0]["content"] for m, r in by_model.items()}
    assert STRICT_RULE in system["gpt-a"] and LENIENT_RULE not in system["gpt-a"]
    assert LENIENT_RULE in system["open-b"] and STRICT_RULE not in system["open-b"]
    (claude,) = server_b.requests
    assert claude.path == "/v1/messages" and claude.headers["x-api-key"] == "sk-endpoint-b"
    assert claude.json["model"] == "claude-c"
    assert "sk-endpoint" not in json.dumps(result.to_dict())


def test_a_judge_never_judges_its_own_providers_work_when_the_panel_says_so(
    tag: str, server_a: ScriptedServer, server_b: ScriptedServer
) -> None:
    _declare(tag, server_a, server_b)
    server_a.script = [answer("pass")]
    server_b.script = [answer("pass")]
    result = _ask(tag, f"{tag}-three@1", provider="OpenAI")  # the work of an OpenAI model
    asked = {v.judge_profile_id for v in result.verdicts}
    assert asked == {f"{tag}-lenient@1", f"{tag}-claude@1"}
    assert [r.json["model"] for r in server_a.requests] == ["open-b"]  # gpt-a was never asked
    assert {v.judge_profile_id for v in result.criterion("P1").votes} == asked
    # a panel without the rule asks every judge, whoever made the work
    server_a.script = [answer("pass"), answer("pass")]
    server_b.script = [answer("pass")]
    everyone = _ask(tag, f"{tag}-three-all@1", provider="openai")
    assert len(everyone.verdicts) == 3
