"""One text validator for every stored string: ``POST /v1/tasks`` and a poisoned stored row.

Was: a lone surrogate in a task's title, prompt, question, ``render.*`` or template was accepted
(201) and from then on ``GET /v1/tasks`` answered 500 to every role, also after a restart;
``version: 2^70`` was a 500; 300 KB ids and families were stored. Now each is a 422 naming the
field, nothing is stored, and a row stored before (a poisoned row) is left out of the listing
(the log names it) instead of making it answer 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import TaskVersionRow
from tasks import bundled_registry
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

BASE = "pelican-bicycle-structured@1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Any]]:
    """A service with a task store (SQLite) and an admin's client."""
    tmp = tmp_path_factory.mktemp("text")
    settings = Settings(data_dir=tmp / "data", database_url=f"sqlite:///{tmp / 'r.sqlite3'}")
    ctx = ServiceContext.open(settings)
    token = create_token(ctx.db, "admin", "a")[0]
    try:
        with (
            serve_in_thread(create_app(ctx)) as url,
            Http(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as client,
        ):
            yield client, ctx
    finally:
        ctx.close()


def stored(ctx: ServiceContext) -> int:
    with ctx.db.read() as s:
        return int(s.scalar(select(func.count(TaskVersionRow.id))) or 0)


def spec(**changes: Any) -> dict[str, Any]:
    doc = {**bundled_registry().get(BASE).to_wire(), "id": "added-task", "title": "Added"}
    doc.update(changes)
    return doc


def with_question(question: str) -> dict[str, Any]:
    doc = spec()
    doc["criteria"] = [dict(c) for c in doc["criteria"]]
    doc["criteria"][1]["question"] = question
    return doc


@pytest.mark.parametrize(
    ("doc", "detail"),
    [
        (spec(title="Heron \ud800"), "title: not valid Unicode text: lone surrogate '\\ud800'"),
        (spec(prompt="a\udfffb"), "prompt: not valid Unicode text: lone surrogate '\\udfff'"),
        (with_question("\ud800?"), "criteria.1.question: not valid Unicode text"),
        (spec(version=2**70), "version: integer out of range (at most 2^53 in magnitude)"),
        (spec(version=2**40), "version: Input should be less than or equal to 2147483647"),
        (spec(id="a" * 300_000), "id: text of 300000 characters (at most 20000)"),
        (spec(family="f" * 5_000), "family: String should have at most 100 characters"),
    ],
    ids=["title", "prompt", "question", "version-2^70", "version-2^40", "id-300KB", "family"],
)
def test_unstorable_task_text_is_refused_naming_the_field(
    served: tuple[httpx.Client, ServiceContext], doc: dict[str, Any], detail: str
) -> None:
    client, ctx = served
    before = stored(ctx)
    content = json.dumps(doc).encode()  # ASCII JSON: a surrogate is sent as \\ud800
    got = client.post("/v1/tasks", content=content, headers={"Content-Type": "application/json"})
    assert got.status_code == 422, got.text[:300]
    assert detail in got.json()["detail"], got.json()["detail"][:300]
    assert stored(ctx) == before  # nothing stored
    assert client.get("/v1/tasks").status_code == 200


def test_a_poisoned_stored_row_is_left_out_not_a_500(
    served: tuple[httpx.Client, ServiceContext],
) -> None:
    client, ctx = served
    poisoned = spec(id="poisoned", title="bad \ud800 title")
    with ctx.db.write() as s:  # as a row stored before such text was refused
        s.add(
            TaskVersionRow(
                ref="poisoned@1",
                task_id="poisoned",
                version=1,
                family=poisoned["family"],
                pool="core",
                content_hash="0" * 64,
                spec=poisoned,
                source="test",
            )
        )
    listed = client.get("/v1/tasks")
    assert listed.status_code == 200
    refs = [t["ref"] for t in listed.json()["tasks"]]
    assert BASE in refs and "poisoned@1" not in refs
    assert client.get("/v1/tasks/poisoned@1").status_code == 404
    good = client.post("/v1/tasks", json=spec())
    assert good.status_code == 201, good.text  # ordinary text is stored as before
    assert "added-task@1" in [t["ref"] for t in client.get("/v1/tasks").json()["tasks"]]
