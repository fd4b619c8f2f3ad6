"""``POST /v1/tasks``: users register task versions; every process of the service sees them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import TaskVersionRow
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

BASE = "pelican-bicycle-static@1"


class Two:
    """Two service contexts (two 'processes') over one database, each on its own HTTP server."""

    def __init__(self, a: httpx.Client, b: httpx.Client, ctx: ServiceContext, admin: str) -> None:
        self.a, self.b, self.ctx = a, b, ctx
        self.admin = {"Authorization": f"Bearer {admin}"}

    def rows(self, ref: str) -> list[tuple[str, str]]:
        """(content hash, source) of the stored rows of ``ref``."""
        with self.ctx.db.read() as s:
            found = s.execute(
                select(TaskVersionRow.content_hash, TaskVersionRow.source).where(
                    TaskVersionRow.ref == ref
                )
            )
            return [(h, src) for h, src in found]


@pytest.fixture
def two(tmp_path: Path, database_url: str) -> Iterator[Two]:
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url)
    ctx_a = ServiceContext.open(settings)
    ctx_b = ServiceContext.open(settings)
    admin = create_token(ctx_a.db, "admin", "admin")[0]
    try:
        with (
            serve_in_thread(create_app(ctx_a)) as url_a,
            serve_in_thread(create_app(ctx_b)) as url_b,
            Http(base_url=url_a, timeout=30) as a,
            Http(base_url=url_b, timeout=30) as b,
        ):
            yield Two(a, b, ctx_a, admin)
    finally:
        ctx_a.close()
        ctx_b.close()


def _exported(two: Two) -> dict[str, Any]:
    got = two.a.get(f"/v1/tasks/{BASE}", headers=two.admin)
    assert got.status_code == 200
    spec: dict[str, Any] = got.json()["spec"]
    return spec | {"id": "heron-scooter", "prompt": "Draw an SVG of a heron riding a scooter."}


def test_registered_task_is_listed_by_another_process_and_frozen(two: Two) -> None:
    spec = _exported(two)
    made = two.a.post("/v1/tasks", json=spec, headers=two.admin)
    assert made.status_code == 201, made.text
    assert made.json()["outcome"] == "created" and made.json()["ref"] == "heron-scooter@1"
    listed = two.b.get("/v1/tasks", headers=two.admin).json()["tasks"]
    assert "heron-scooter@1" in [t["ref"] for t in listed]
    shown = two.b.get("/v1/tasks/heron-scooter@1", headers=two.admin).json()
    assert shown["spec"] == spec and shown["content_hash"] == made.json()["content_hash"]
    # the same content again: a no-op answered 200
    again = two.b.post("/v1/tasks", json=spec, headers=two.admin)
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    # changed content under the same ref: 409 naming the versions; nothing stored
    changed = two.b.post("/v1/tasks", json=spec | {"prompt": "A stork."}, headers=two.admin)
    assert changed.status_code == 409
    body = changed.json()
    assert body["error"] == "task_changed"
    assert "A changed task is a new version" in body["detail"]
    assert (
        "registered versions are heron-scooter@1; register it as heron-scooter@2"
        in (body["detail"])
    )
    assert two.rows("heron-scooter@1") == [(made.json()["content_hash"], "api:token 1")]
    # version 2 is a new version, accepted
    v2 = two.b.post(
        "/v1/tasks", json=spec | {"prompt": "A stork.", "version": 2}, headers=two.admin
    )
    assert v2.status_code == 201
    assert "heron-scooter@2" in [
        t["ref"] for t in two.a.get("/v1/tasks", headers=two.admin).json()["tasks"]
    ]
    # the other process takes runs of the registered task
    run = {"task": "heron-scooter@1", "model": {"label": "m"}, "output": "<svg/>"}
    sent = two.b.post("/v1/runs", json=run, headers=two.admin)
    assert sent.status_code == 202, sent.text
    _bundled_refs_stay_frozen(two)
    _bad_task_and_wrong_role_are_refused_and_store_nothing(two)


def _bundled_refs_stay_frozen(two: Two) -> None:
    bundled = two.a.get(f"/v1/tasks/{BASE}", headers=two.admin).json()["spec"]
    same = two.a.post("/v1/tasks", json=bundled, headers=two.admin)
    assert same.status_code == 200 and same.json()["outcome"] == "unchanged"
    changed = two.a.post("/v1/tasks", json=bundled | {"prompt": "x"}, headers=two.admin)
    assert changed.status_code == 409
    assert "pelican-bicycle-static@1" in changed.json()["detail"]
    assert two.rows(BASE) == []


def _bad_task_and_wrong_role_are_refused_and_store_nothing(two: Two) -> None:
    spec = _exported(two) | {"id": "never-stored"}
    bad = spec | {"version": 0, "mode": "sculpted"}
    refused = two.a.post("/v1/tasks", json=bad, headers=two.admin)
    assert refused.status_code == 422
    detail = refused.json()["detail"]
    assert "version: Input should be greater than or equal to 1" in detail
    assert "mode: Input should be 'static' or 'animated'" in detail
    submitter = create_token(two.ctx.db, "submitter", "s")[0]
    denied = two.a.post("/v1/tasks", json=spec, headers={"Authorization": f"Bearer {submitter}"})
    assert denied.status_code == 403
    anonymous = two.a.post("/v1/tasks", json=spec)
    assert anonymous.status_code == 401
    assert two.rows("never-stored@1") == []
    with two.ctx.db.read() as s:  # heron-scooter@1 and @2 only
        assert s.scalar(select(func.count()).select_from(TaskVersionRow)) == 2
