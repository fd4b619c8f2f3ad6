"""A provider that echoes the key it was sent (in an ``Authorization`` or ``x-api-key`` header)
leaves no trace of it: the run's outcome cause, its stage record, its evaluation, its
generation record, the API's run view and job, and the run page show ``[redacted]``; the
SQLite file and the artifact folder hold no byte of either key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.llm.testing import Answerer, FakeModelServer, Reply, Request, serving
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import Evaluation, GenerationRow, Run, StageRecord
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.helpers.web import web_login
from tests.service.conftest import drain

TASK = "pelican-bicycle-structured@1"
OPENAI_KEY = "sk-echo-openai-5f3a9c2e71"
ANTHROPIC_KEY = "ak-echo-anthropic-0b8d4411"


def echo(request: Request) -> Reply:
    """Refuse every call, quoting the credentials it came with (as a careless proxy might)."""
    sent = {k: v for k, v in request.headers.items() if k in ("authorization", "x-api-key")}
    message = f"invalid credentials: {sent}; Authorization: {sent.get('authorization', '-')}"
    return Reply(status=401, body=json.dumps({"error": {"message": message, "echo": sent}}))


@pytest.fixture
def echo_server() -> Iterator[FakeModelServer[Answerer]]:
    answer: Answerer = echo
    with serving(answer) as server:
        yield server


def _settings(tmp_path: Path, url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        render_workers=1,
        generation_max_attempts=1,
        generation_key_envs=[
            f"GEN_ECHO_OPENAI=openai@{url}/v1",
            f"GEN_ECHO_ANTHROPIC=anthropic@{url}",
        ],
    )


def test_an_echoed_key_is_redacted_everywhere_it_is_stored_or_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_server: FakeModelServer[Answerer]
) -> None:
    monkeypatch.setenv("GEN_ECHO_OPENAI", OPENAI_KEY)
    monkeypatch.setenv("GEN_ECHO_ANTHROPIC", ANTHROPIC_KEY)
    ctx = ServiceContext.open(_settings(tmp_path, echo_server.url))
    try:
        token = create_token(ctx.db, "submitter", "alice")[0]
        shown = _generate_and_look(ctx, token, echo_server.url)
        sent = {
            r.headers.get("authorization") or r.headers.get("x-api-key")
            for r in echo_server.requests
        }
        assert sent == {f"Bearer {OPENAI_KEY}", ANTHROPIC_KEY}  # the keys did go to the server
        for text in shown:
            assert OPENAI_KEY not in text and ANTHROPIC_KEY not in text
            assert "[redacted]" in text
        _stored_texts_are_redacted(ctx)
    finally:
        ctx.close()
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert OPENAI_KEY.encode() not in data and ANTHROPIC_KEY.encode() not in data, path


def _generate_and_look(ctx: ServiceContext, token: str, url: str) -> list[str]:
    """Generate once per API as a submitter; the API's and the page's texts of both runs."""
    bearer = {"Authorization": f"Bearer {token}"}
    shown: list[str] = []
    with serve_in_thread(create_app(ctx)) as base, Http(base_url=base, timeout=120) as http:
        runs = []
        for api, key_env, where in (
            ("openai", "GEN_ECHO_OPENAI", f"{url}/v1"),
            ("anthropic", "GEN_ECHO_ANTHROPIC", url),
        ):
            body = {
                "task": TASK,
                "api": api,
                "model": "m",
                "base_url": where,
                "api_key_env": key_env,
                "wait": True,
            }
            job = http.post("/v1/generations", json=body, headers=bearer)
            assert job.status_code == 201, job.text
            shown.append(http.get(job.json()["status_url"], headers=bearer).text)
            runs += job.json()["run_ids"]
        drain(ctx)
        with Http(base_url=base, follow_redirects=True, timeout=120) as browser:
            web_login(browser, token)
            for run_id in runs:
                view = http.get(f"/v1/runs/{run_id}", headers=bearer)
                assert view.json()["outcome"]["status"] == "incomplete"
                shown += [view.text, browser.get(f"/runs/{run_id}").text]
    return [t for t in shown if "invalid credentials" in t]


def _stored_texts_are_redacted(ctx: ServiceContext) -> None:
    with ctx.db.read() as s:
        texts = [
            *s.scalars(select(Run.outcome_cause)),
            *(json.dumps(d) for d in s.scalars(select(StageRecord.detail)) if d),
            *s.scalars(select(Evaluation.cause)),
            *s.scalars(select(GenerationRow.cause)),
        ]
    echoed = [t for t in texts if t and "invalid credentials" in t]
    assert len(echoed) == 8  # two runs: outcome, stage record, evaluation, generation record
    for text in echoed:
        assert OPENAI_KEY not in text and ANTHROPIC_KEY not in text and "[redacted]" in text
