"""Every role boundary: 401 without a token, 403 outside the role, reviewers stay blind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from service.access.tokens import ensure_admin_token, hash_token
from service.storage import ApiToken
from tests.service.conftest import Api

TASK = "pelican-bicycle-structured@1"
GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
LABEL = "secret-model-label-7"


def _submitted(api: Api) -> dict[str, Any]:
    body = {"task": TASK, "model": {"label": LABEL, "provider": "acme"}, "output": GOOD}
    run_id = api.client.post("/v1/runs", json=body, headers=api.h("submitter")).json()["run_id"]
    api.drain()
    view: dict[str, Any] = api.client.get(f"/v1/runs/{run_id}", headers=api.h("admin")).json()

    return view


def test_401_without_or_with_a_bad_token(api: Api) -> None:
    for path in ("/v1/runs", "/v1/tasks", "/v1/artifacts/" + "a" * 64):
        r = api.client.get(path)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert api.client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
        assert api.client.get(path, headers={"Authorization": "Basic abc"}).status_code == 401
    assert api.client.post("/v1/runs", json={}).status_code == 401


def test_submitter_reads_only_own_runs(api: Api) -> None:
    view = _submitted(api)
    run_id = view["run_id"]
    assert api.client.get(f"/v1/runs/{run_id}", headers=api.h("submitter")).status_code == 200
    # another submitter's run answers exactly like an unknown one: no existence oracle
    theirs = api.client.get(f"/v1/runs/{run_id}", headers=api.h("other"))
    unknown = api.client.get(f"/v1/runs/{'0' * 32}", headers=api.h("other"))
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json()["error"] == unknown.json()["error"]
    assert api.client.get("/v1/runs", headers=api.h("other")).json()["runs"] == []
    raw = next(a for a in view["artifacts"] if a["kind"] == "raw")
    other_raw = api.client.get(raw["url"], headers=api.h("other"))
    unknown_raw = api.client.get("/v1/artifacts/" + "0" * 64, headers=api.h("other"))
    assert other_raw.status_code == unknown_raw.status_code == 404
    assert api.client.get(raw["url"], headers=api.h("submitter")).status_code == 200
    r = api.client.post("/v1/tokens", json={"role": "admin"}, headers=api.h("submitter"))
    assert r.status_code == 403


def test_reviewer_never_sees_model_identity(api: Api) -> None:
    view = _submitted(api)
    run_id = view["run_id"]
    h = api.h("reviewer")
    seen = []
    for path in (f"/v1/runs/{run_id}", "/v1/runs", f"/v1/runs?task={TASK}"):
        r = api.client.get(path, headers=h)
        assert r.status_code == 403
        seen.append(r.text)
    body = {"task": TASK, "model": {"label": "x"}, "output": GOOD}
    assert api.client.post("/v1/runs", json=body, headers=h).status_code == 403
    assert api.client.post("/v1/tokens", json={"role": "admin"}, headers=h).status_code == 403
    for art in view["artifacts"]:
        r = api.client.get(art["url"], headers=h)
        assert r.status_code == (200 if art["kind"] in ("frame", "mask") else 404), art["kind"]
        seen.append(r.text if r.status_code != 200 else "")
    seen.append(api.client.get("/v1/tasks", headers=h).text)
    assert all(LABEL not in text and "acme" not in text for text in seen)


def test_admin_reads_everything_and_creates_tokens(api: Api) -> None:
    view = _submitted(api)
    assert view["model"] == {"label": LABEL, "provider": "acme", "params": None}
    assert len(api.client.get("/v1/runs", headers=api.h("admin")).json()["runs"]) == 1
    r = api.client.post(
        "/v1/tokens", json={"role": "reviewer", "name": "rev2"}, headers=api.h("admin")
    )
    assert r.status_code == 201
    secret = r.json()["token"]
    with api.ctx.db.read() as s:
        hashes = set(s.scalars(select(ApiToken.token_hash)))
        assert hash_token(api.ctx.db, secret) in hashes and secret not in hashes
    r = api.client.post("/v1/tokens", json={"role": "king"}, headers=api.h("admin"))
    assert r.status_code == 422 and "role" in r.json()["detail"]


def test_first_start_creates_one_admin_token_file(tmp_path: Path, api: Api) -> None:
    # the api fixture already holds an admin token, so nothing new is created
    assert ensure_admin_token(api.ctx.db, tmp_path) is None
    with api.ctx.db.write() as s:
        for row in s.scalars(select(ApiToken).where(ApiToken.role == "admin")):
            row.role = "submitter"
    path = ensure_admin_token(api.ctx.db, tmp_path)
    assert path is not None and oct(path.stat().st_mode & 0o777) == "0o600"
    token = path.read_text().strip()
    assert (
        api.client.get("/v1/runs", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    )
    assert ensure_admin_token(api.ctx.db, tmp_path) is None


def test_no_get_endpoint_leaks_a_model_label_to_a_reviewer(api: Api) -> None:
    """Every GET route of the whole app (other areas' routers included) stays blind."""
    view = _submitted(api)
    paths = api.client.get("/v1/openapi.json").json()["paths"]
    checked = 0
    for path, ops in paths.items():
        if "get" not in ops:
            continue
        concrete = path.replace("{run_id}", str(view["run_id"])).replace("{sha256}", "0" * 64)
        if "{" in concrete:
            continue
        r = api.client.get(concrete, headers=api.h("reviewer"))
        assert LABEL not in r.text and "acme" not in r.text, (path, r.status_code)
        checked += 1
    assert checked >= 5
