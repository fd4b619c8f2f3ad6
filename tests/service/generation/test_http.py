"""``POST /v1/generations`` and ``GET /v1/generations/{id}`` on a real loopback server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from regua.errors import PermissionDeniedError
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.generation.policy import check_allowed
from service.generation.request import GenerationParams
from service.server import create_app
from service.storage import Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.helpers.web import web_login

TASK = "pelican-bicycle-structured@1"


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_generation_job_runs_and_refusals(gen_ctx: ServiceContext) -> None:
    alice_token = create_token(gen_ctx.db, "submitter", "alice")[0]
    alice = _h(alice_token)
    bob = _h(create_token(gen_ctx.db, "submitter", "bob")[0])
    reviewer = _h(create_token(gen_ctx.db, "reviewer", "rev")[0])
    admin = _h(create_token(gen_ctx.db, "admin", "root")[0])
    body = {"task": TASK, "api": "mock", "model": "m", "repeats": 2}
    with (
        serve_in_thread(create_app(gen_ctx)) as url,
        Http(base_url=url, timeout=120) as http,
    ):
        job = http.post("/v1/generations", json=body, headers=alice)
        assert job.status_code == 202, job.text
        view = job.json()
        assert view["mock"] is True and view["model"] == "mock:m" and view["repeats"] == 2
        deadline = time.monotonic() + 30
        while view["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
            view = http.get(view["status_url"], headers=alice).json()
        assert view["state"] == "done" and view["done"] == 2 and len(view["run_ids"]) == 2
        assert http.get(view["status_url"], headers=bob).status_code == 404  # not bob's
        run = http.get(f"/v1/runs/{view['run_ids'][0]}", headers=alice).json()
        assert run["generation"]["api"] == "mock" and run["generation"]["mock"] is True
        assert run["model"]["label"] == "mock:m"
        waited = http.post("/v1/generations", json={**body, "wait": True}, headers=alice)
        assert waited.status_code == 201 and waited.json()["state"] == "done"
        assert http.post("/v1/generations", json=body, headers=reviewer).status_code == 403
        unknown = http.post("/v1/generations", json={**body, "task": "nope@1"}, headers=alice)
        assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_task"
        keyless = {**body, "api": "openai", "api_key_env": "GEN_TEST_NOT_SET"}
        missing = http.post("/v1/generations", json=keyless, headers=admin)
        assert missing.status_code == 422
        assert "GEN_TEST_NOT_SET is not set" in missing.json()["detail"]
        # a submitter cannot send the service's variables to a server of their own choosing
        secret_env = {**body, "api": "openai", "api_key_env": "REGUA_JUDGE_API_KEY"}
        leak = http.post("/v1/generations", json=secret_env, headers=alice)
        assert leak.status_code == 403 and "REGUA_GENERATION_KEY_ENVS" in leak.json()["detail"]
        inside = {**body, "api": "openai", "base_url": "http://10.0.0.1/v1"}
        probe = http.post("/v1/generations", json=inside, headers=alice)
        assert probe.status_code == 403 and "REGUA_GENERATION_BASE_URLS" in probe.json()["detail"]
        ftp = http.post("/v1/generations", json={**body, "base_url": "ftp://x/v1"}, headers=admin)
        assert ftp.status_code == 422 and "http:// or https://" in ftp.text
        bad_api = http.post("/v1/generations", json={**body, "api": "palm"}, headers=alice)
        assert bad_api.status_code == 422 and "api" in bad_api.text
        plain = http.post(
            "/v1/runs",
            json={"task": TASK, "model": {"label": "x"}, "output": "no svg"},
            headers=alice,
        ).json()
        assert http.get(f"/v1/runs/{plain['run_id']}", headers=alice).json()["generation"] is None
        with Http(base_url=url, follow_redirects=True, timeout=120) as browser:
            web_login(browser, alice_token)
            page = browser.get(f"/runs/{view['run_ids'][0]}")
            assert page.status_code == 200
            assert "Generation" in page.text and "MOCK: bundled replies" in page.text
            assert "not available" in page.text  # the mock's cost
            plain_page = browser.get(f"/runs/{plain['run_id']}").text
            assert "MOCK: bundled" not in plain_page and "Prompt sha256" not in plain_page
    with gen_ctx.db.read() as s:
        assert s.query(Run).count() == 5  # 2 + 2 generated + 1 submitted; refusals stored none


def test_submitter_allow_lists_and_admins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_TEST_LOCAL_KEY", "sk-local-123456")
    settings = Settings(
        data_dir=tmp_path,
        generation_base_urls=["http://127.0.0.1:8001/v1"],
        generation_key_envs=["GEN_TEST_LOCAL_KEY=openai@http://127.0.0.1:8001/v1"],
    )
    listed = GenerationParams(
        api="openai",
        model="m",
        base_url="http://127.0.0.1:8001/v1/",
        api_key_env="GEN_TEST_LOCAL_KEY",
    )
    check_allowed(settings, listed, is_admin=False)  # listed URL (trailing slash) and variable
    default = GenerationParams(api="anthropic", model="m", base_url="https://api.anthropic.com/v1")
    check_allowed(settings, default, is_admin=False)  # the API's own default URL
    other = listed.model_copy(update={"base_url": "http://127.0.0.1:8002/v1", "api_key_env": None})
    with pytest.raises(PermissionDeniedError, match="8002"):
        check_allowed(settings, other, is_admin=False)
    home = listed.model_copy(update={"api_key_env": "HOME"})
    with pytest.raises(PermissionDeniedError, match="no key HOME may be sent"):
        check_allowed(settings, home, is_admin=False)
    check_allowed(settings, other.model_copy(update={"api_key_env": "HOME"}), is_admin=True)
