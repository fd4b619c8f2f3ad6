"""Each key variable goes only to the endpoints it is bound to (``REGUA_GENERATION_KEY_ENVS``
entries ``VAR=API[@BASE_URL]``); anything else is one 403 that names no other variable and
does not tell whether a variable is set. Nothing is sent, nothing is stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from regua.llm.testing import Reply, ScriptedServer, scripted_server
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

TASK = "pelican-bicycle-structured@1"


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


@pytest.fixture
def paired(
    tmp_path: Path, model: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ServiceContext]:
    monkeypatch.setenv("GEN_PAIR_OPENAI", "sk-pair-openai-1111")
    monkeypatch.setenv("GEN_PAIR_ANTHROPIC", "ak-pair-anthropic-2222")
    monkeypatch.delenv("GEN_PAIR_UNSET", raising=False)
    settings = Settings(
        data_dir=tmp_path / "data",
        generation_max_attempts=1,
        generation_key_envs=[
            f"GEN_PAIR_OPENAI=openai@{model.url}/v1",
            "GEN_PAIR_ANTHROPIC=anthropic",
            f"GEN_PAIR_UNSET=openai@{model.url}",
        ],
    )
    ctx = ServiceContext.open(settings)
    yield ctx
    ctx.close()


def _post(http: httpx.Client, token: str, **body: object) -> httpx.Response:
    request = {"task": TASK, "model": "m", "wait": True, **body}
    return http.post("/v1/generations", json=request, headers={"Authorization": f"Bearer {token}"})


def test_keys_go_only_where_they_are_bound(paired: ServiceContext, model: ScriptedServer) -> None:
    alice = create_token(paired.db, "submitter", "alice")[0]
    root = create_token(paired.db, "admin", "root")[0]
    local = f"{model.url}/v1"
    with (
        serve_in_thread(create_app(paired)) as url,
        Http(base_url=url, timeout=120) as http,
    ):
        refusals = {
            # the OpenAI key to Anthropic, the Anthropic key to an OpenAI-compatible server
            "to another API": _post(http, alice, api="anthropic", api_key_env="GEN_PAIR_OPENAI"),
            "to another server": _post(
                http, alice, api="openai", base_url=local, api_key_env="GEN_PAIR_ANTHROPIC"
            ),
            "to the API default": _post(http, alice, api="openai", api_key_env="GEN_PAIR_OPENAI"),
            "unlisted": _post(http, alice, api="openai", base_url=local, api_key_env="HOME"),
            "listed, unset": _post(
                http, alice, api="openai", base_url=model.url, api_key_env="GEN_PAIR_UNSET"
            ),
            "admin, listed elsewhere": _post(
                http, root, api="openai", api_key_env="GEN_PAIR_OPENAI"
            ),
        }
        for why, answer in refusals.items():
            assert answer.status_code == 403, (why, answer.text)
            detail = answer.json()["detail"]
            named = [
                v
                for v in ("GEN_PAIR_OPENAI", "GEN_PAIR_ANTHROPIC", "GEN_PAIR_UNSET", "HOME")
                if v in detail
            ]
            assert len(named) == 1, (why, detail)  # only the variable the caller named
            assert "not set" not in detail and "allowed:" not in detail
        unset = refusals["listed, unset"].json()["detail"].replace("GEN_PAIR_UNSET", "V")
        unlisted = refusals["unlisted"].json()["detail"].replace("HOME", "V")
        assert unset.replace(f"{model.url}/v1", model.url) == unlisted.replace(local, model.url)
        assert model.requests == []  # no key went anywhere
        model.script = [Reply("```svg\n<svg/>\n```"), Reply("```svg\n<svg/>\n```")]
        bound = _post(http, alice, api="openai", base_url=model.url, api_key_env="GEN_PAIR_OPENAI")
        assert bound.status_code == 201, bound.text  # its endpoint, written without /v1
        anywhere = _post(http, root, api="openai", base_url=local, api_key_env="HOME")
        assert anywhere.status_code == 201, anywhere.text  # an admin's own unlisted variable
    assert model.requests[0].headers["authorization"] == "Bearer sk-pair-openai-1111"
    with paired.db.read() as s:
        assert s.query(Run).count() == 2  # the refusals stored nothing


def test_an_entry_without_its_endpoint_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="VAR=API or VAR=API@BASE_URL"):
        Settings(generation_key_envs=["OPENAI_API_KEY"])
