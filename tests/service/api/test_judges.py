"""``GET /v1/judges``, ``GET /v1/panels``, ``REGUA_JUDGES_DIR``, ``REGUA_PANEL`` and ``panel`` on
``POST /v1/runs`` / ``regua submit``, over a real HTTP server on the real pipeline.

The judges folder declares two vision judges, one per API, both served by a real local HTTP
server imitating the models; each declares its provider, and the panel keeps a judge off work
made by a model of its own provider.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

import judges
from regua.errors import NotFoundError
from regua.llm.testing import Reply, ScriptedServer, scripted_server
from regua.settings import Settings
from sandbox import WorkerPool
from service.cli import app
from service.context import ServiceContext
from service.server import create_app
from service.storage import Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread
from tests.service.conftest import GOOD, Api

TASK = "pelican-bicycle-structured@2"
KEY = "sk-vision-test-SECRET"


def judge_file(tag: str, url: str) -> str:
    return f"""
profiles:
  - {{id: {tag}-gpt@1, kind: vision-llm, api: openai, model: gpt-x, base_url: "{url}",
     api_key_env: {tag}_KEY, provider: openai, params: {{max_retries: 0, timeout_s: 5}}}}
  - {{id: {tag}-claude@1, kind: vision-llm, api: anthropic, model: claude-x, base_url: "{url}/v1",
     api_key_env: {tag}_KEY, provider: anthropic, params: {{max_retries: 0, timeout_s: 5}}}}
panels:
  - id: {tag}-mixed@1
    family: pelican-bicycle
    exclude_own_provider: true
    description: static, geometry and two vision models that never judge their own provider
    assignments:
      "*": [static@1, geometry@2, {tag}-gpt@1, {tag}-claude@1]
      F1: [static@1]
"""


class World:
    """The app over a context whose judges folder holds this test's file."""

    def __init__(self, api: Api, tag: str, llm: ScriptedServer) -> None:
        self.api, self.tag, self.llm = api, tag, llm
        self.panel = f"{tag}-mixed@1"


@pytest.fixture
def world(
    settings: Settings, render_pool: WorkerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[World]:
    tag = f"t{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(f"{tag}_KEY", KEY)
    folder = tmp_path / "judges"
    folder.mkdir()
    with scripted_server() as llm:
        llm.script = [Reply('{"status": "pass", "evidence": "ok", "time_s": 0}')] * 40
        (folder / "vision.yaml").write_text(judge_file(tag, llm.url))
        conf = settings.model_copy(update={"judges_dir": folder, "panel": f"{tag}-mixed@1"})
        ctx = ServiceContext.open(conf, render_pool=render_pool)
        try:
            with (
                serve_in_thread(create_app(ctx)) as url,
                Http(base_url=url, timeout=60) as client,
            ):
                yield World(Api(client, ctx), tag, llm)
        finally:
            ctx.close()


def test_get_judges_lists_builtin_and_declared_profiles(world: World) -> None:
    api, tag = world.api, world.tag
    r = api.client.get("/v1/judges", headers=api.h("reviewer"))
    assert r.status_code == 200
    assert KEY not in r.text  # a key is never listed, only the variable's name
    by_id = {j["id"]: j for j in r.json()["judges"]}
    assert {"static@1", "geometry@2", "vision-llm-openai@1", f"{tag}-gpt@1"} <= set(by_id)
    gpt = by_id[f"{tag}-gpt@1"]
    assert gpt["kind"] == "vision-llm" and gpt["model"] == "gpt-x"
    assert gpt["params"]["api_key_env"] == f"{tag}_KEY" and gpt["params"]["provider"] == "openai"
    assert gpt["content_hash"] == judges.get_profile(f"{tag}-gpt@1").content_hash()
    assert gpt["votes_as"] == {"id": f"{tag}-gpt@1", "content_hash": gpt["content_hash"]}
    assert gpt["source"].endswith("vision.yaml") and by_id["static@1"]["source"] == "builtin"
    assert api.client.get("/v1/judges").status_code == 401


def test_get_panels_lists_each_panel_with_id_family_and_assignments(world: World) -> None:
    api = world.api
    r = api.client.get("/v1/panels", headers=api.h("submitter"))
    assert r.status_code == 200
    by_id = {p["id"]: p for p in r.json()["panels"]}
    mine = by_id[world.panel]
    assert mine["family"] == "pelican-bicycle" and mine["exclude_own_provider"] is True
    assert mine["assignments"]["F1"] == ["static@1"]
    assert mine["service_panel"] is True  # REGUA_PANEL
    vision = by_id["pelican-bicycle-vision@1"]
    assert vision["assignments"] == {
        "*": ["static@1", "geometry@2", "vision-llm-openai@1"],
        "F1": ["static@1"],
    }
    assert TASK in by_id["pelican-bicycle-default@2"]["default_for_tasks"]
    assert "pelican-bicycle-structured@1" in by_id["pelican-bicycle-default@1"]["default_for_tasks"]


def _runs(api: Api) -> int:
    with api.ctx.db.read() as s:
        return int(s.scalar(select(func.count(Run.id))) or 0)


def _body(panel: str | None, provider: str = "openai") -> dict[str, object]:
    body: dict[str, object] = {
        "task": TASK,
        "model": {"label": "m", "provider": provider},
        "output": GOOD,
    }
    if panel is not None:
        body["panel"] = panel
    return body


def test_post_runs_with_an_unknown_panel_is_404_and_stores_nothing(world: World) -> None:
    api = world.api
    r = api.client.post("/v1/runs", json=_body("nobody@1"), headers=api.h("submitter"))
    assert r.status_code == 404
    assert "unknown judge panel 'nobody@1'" in r.json()["detail"]
    assert "pelican-bicycle-vision@1" in r.json()["detail"]  # the known ones are named
    assert _runs(api) == 0


def test_post_runs_with_another_familys_panel_is_422(world: World) -> None:
    api = world.api
    other = judges.register_panel(
        judges.JudgePanel(f"{world.tag}-other@1", "other-family", {"*": ("static@1",)})
    )
    r = api.client.post("/v1/runs", json=_body(other.id), headers=api.h("submitter"))
    assert r.status_code == 422
    assert (
        f"judge panel {other.id} is for task family other-family, not pelican-bicycle"
        in (r.json()["detail"])
    )
    assert _runs(api) == 0


@pytest.mark.browser
@pytest.mark.sandbox
def test_the_panel_asked_for_judges_and_a_judge_skips_its_own_provider(world: World) -> None:
    api = world.api
    asked = api.client.post("/v1/runs", json=_body(world.panel), headers=api.h("submitter"))
    default = api.client.post(
        "/v1/runs", json=_body("pelican-bicycle-default@2"), headers=api.h("submitter")
    )
    assert asked.status_code == 202 and default.status_code == 202
    api.drain()
    mine = api.client.get(f"/v1/runs/{asked.json()['run_id']}", headers=api.h("submitter")).json()
    assert mine["evaluation"]["versions"]["judge_panel"]["id"] == world.panel
    with api.ctx.db.read() as s:
        run = s.get(Run, asked.json()["run_id"])
        assert run is not None and run.panel_id == world.panel
    # the work of an OpenAI model: only the Anthropic judge was asked, never the OpenAI one
    models = {r.json["model"] for r in world.llm.requests}
    assert models == {"claude-x"}
    assert {r.path for r in world.llm.requests} == {"/v1/messages"}
    p1 = next(c for c in mine["evaluation"]["criteria"] if c["criterion"] == "P1")
    (vote,) = p1["votes"]
    assert vote["judge_profile_id"] == f"{world.tag}-claude@1"
    assert vote["eligible"] is False and vote["gate"] is None  # never calibrated here
    assert vote["basis"].startswith("never calibrated")
    other = api.client.get(f"/v1/runs/{default.json()['run_id']}", headers=api.h("submitter"))
    assert other.json()["evaluation"]["versions"]["judge_panel"]["id"] == (
        "pelican-bicycle-default@2"
    )


def test_regua_submit_passes_the_panel(world: World, tmp_path: Path) -> None:
    reply = tmp_path / "reply.svg"
    reply.write_text(GOOD)
    url = str(world.api.client.base_url).rstrip("/")
    args = ["submit", str(reply), "--task", TASK, "--model", "m", "--panel", world.panel]
    args += ["--no-wait", "--url", url, "--token", world.api.tokens["submitter"]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    with world.api.ctx.db.read() as s:
        assert s.scalars(select(Run.panel_id)).all() == [world.panel]


def test_an_unknown_service_panel_stops_the_start(settings: Settings) -> None:
    with pytest.raises(NotFoundError, match="unknown judge panel 'nobody@1'; known: "):
        ServiceContext.open(settings.model_copy(update={"panel": "nobody@1"}))
