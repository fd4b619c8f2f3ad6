"""HTTP API: submission, limits with clear errors, nothing half-stored, artifacts and tasks."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy import func, select

from service.storage import Artifact, Run
from tests.service.conftest import Api

TASK = "pelican-bicycle-structured@1"
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


def _body(output: str = GOOD, task: str = TASK) -> dict[str, object]:
    return {
        "task": task,
        "model": {"label": "m1", "provider": "p", "params": {"t": 0}},
        "output": output,
    }


def _counts(api: Api) -> tuple[int, int]:
    with api.ctx.db.read() as s:
        return (
            int(s.scalar(select(func.count(Run.id))) or 0),
            int(s.scalar(select(func.count(Artifact.id))) or 0),
        )


def _drain(api: Api) -> None:
    api.drain()


def test_submit_follow_and_resolve_artifacts(api: Api) -> None:
    r = api.client.post("/v1/runs", json=_body("Here you go:\n" + GOOD), headers=api.h("submitter"))
    assert r.status_code == 202 and r.json()["status"] == "queued"
    run_id = r.json()["run_id"]
    assert (
        api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).json()["status"]
        == "queued"
    )
    _drain(api)
    view = api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).json()
    assert view["status"] == "done" and view["outcome"]["status"] == "pending"
    assert view["model"]["label"] == "m1"
    crit = {c["criterion"]: c for c in view["evaluation"]["criteria"]}
    assert crit["F1"]["status"] == "pass" and crit["A"]["status"] == "not_applicable"
    assert crit["R2"]["review_required"] and crit["R2"]["review_reason"] == "no_reliable_judge"
    ev = crit["F1"]["verdicts"][0]["evidence"][0]
    assert set(ev) == {"artifact_ref", "artifact_name", "time_s", "description"}
    assert ev["artifact_name"] == "checks.json" and len(ev["artifact_ref"]) == 64  # a sha256
    by_id = {a["id"]: a for a in view["artifacts"]}
    for art in view["artifacts"]:
        got = api.client.get(art["url"], headers=api.h("submitter"))
        assert got.status_code == 200
        assert got.headers["content-type"].split(";")[0] == art["media_type"].split(";")[0]
        assert hashlib.sha256(got.content).hexdigest() == art["sha256"]
        if art["parent_id"]:
            assert by_id[art["parent_id"]]["sha256"] == art["parent_sha256"]
    kinds = {a["kind"]: a for a in view["artifacts"]}
    assert kinds["extracted"]["parent_id"] == kinds["raw"]["id"]
    assert kinds["frame"]["parent_id"] == kinds["extracted"]["id"]


def test_batch_is_all_or_nothing(api: Api) -> None:
    good = api.client.post(
        "/v1/runs/batch", json={"runs": [_body(), _body(GOOD + " ")]}, headers=api.h("submitter")
    )
    assert good.status_code == 202 and good.json()["batch_size"] == 2
    before = _counts(api)
    bad = api.client.post(
        "/v1/runs/batch",
        json={"runs": [_body(), _body(task="nope@9")]},
        headers=api.h("submitter"),
    )
    assert bad.status_code == 404 and TASK in bad.json()["known_tasks"]
    assert _counts(api) == before


def test_clear_errors_and_nothing_half_stored(api: Api) -> None:
    before = _counts(api)
    h = api.h("submitter")
    r = api.client.post("/v1/runs", json=_body(task="unicorn@1"), headers=h)
    assert r.status_code == 404 and "pelican-bicycle-static@1" in r.json()["known_tasks"]
    r = api.client.post("/v1/runs", json={"task": TASK, "model": {}, "output": "x"}, headers=h)
    assert r.status_code == 422 and "model.label" in r.json()["detail"]
    r = api.client.post("/v1/runs", json={"task": TASK, "model": {"label": "m"}}, headers=h)
    assert r.status_code == 422 and r.json()["fields"][0]["field"] == "output"
    r = api.client.post(
        "/v1/runs", content=b"{not json", headers={**h, "content-type": "application/json"}
    )
    assert r.status_code == 422
    big = "x" * (api.ctx.settings.max_body_bytes + 10)
    r = api.client.post("/v1/runs", json=_body(big), headers=h)
    assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
    assert _counts(api) == before


def test_backpressure_429_with_retry_after(api: Api) -> None:
    cap = api.ctx.settings.queue_capacity
    h = api.h("submitter")
    for who, pad in (("submitter", 0), ("other", cap)):  # one submitter may fill half the queue
        runs = [_body(GOOD + " " * (pad + i)) for i in range(cap // 2)]
        posted = api.client.post("/v1/runs/batch", json={"runs": runs}, headers=api.h(who))
        assert posted.status_code == 202
    before = _counts(api)
    r = api.client.post("/v1/runs", json=_body(), headers=h)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert _counts(api) == before
    _drain(api)
    assert api.client.post("/v1/runs", json=_body(), headers=h).status_code == 202


def test_tasks_and_openapi(api: Api) -> None:
    tasks = api.client.get("/v1/tasks", headers=api.h("submitter")).json()["tasks"]
    assert TASK in {t["ref"] for t in tasks}
    one = api.client.get(f"/v1/tasks/{TASK}", headers=api.h("reviewer")).json()
    assert one["spec"]["id"] == "pelican-bicycle-structured" and len(one["content_hash"]) == 64
    assert api.client.get("/v1/tasks/nope@1", headers=api.h("admin")).status_code == 404
    spec = api.client.get("/v1/openapi.json").json()
    for path in ("/v1/runs", "/v1/runs/batch", "/v1/runs/{run_id}", "/v1/artifacts/{sha256}"):
        assert path in spec["paths"]
    deletable = {path for path, ops in spec["paths"].items() if "delete" in ops}
    assert deletable == {"/v1/tokens/{token_id}"}  # revoking a token; no run or result is deleted
    assert api.client.get("/v1/artifacts/" + "0" * 64, headers=api.h("admin")).status_code == 404
