"""Generation jobs run on the context's generate runner (embedded): ``ctx.close()`` stops one at
its next model call, its stored state says ``interrupted`` and ``resumable`` (any process reads
it), and resuming it asks the model only for the repeats not stored yet.

The fake model (a real local HTTP server) answers the first call at once and holds the second
until the test sees the context stopping, so the stop lands between two calls without a sleep.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from regua.llm.testing import FakeModelServer, Reply, Request, serving
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import GenerationJobRow, GenerationRow
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

TASK = "pelican-bicycle-structured@1"
SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


class SecondHeld:
    """Answers every call with the SVG; the second call waits until ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.second_asked = threading.Event()
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        del request
        with self.lock:
            self.calls += 1
            call = self.calls
        if call == 2:
            self.second_asked.set()
            assert self.release.wait(120), "the test never released the second call"
        return Reply(text=SVG)


@pytest.fixture
def model() -> Iterator[FakeModelServer[SecondHeld]]:
    with serving(SecondHeld()) as server:
        yield server


def _settings(tmp_path: Path, model: FakeModelServer[SecondHeld]) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        generation_base_urls=[f"{model.url}/v1"],
        generation_backoff_s=0.01,
        generation_concurrency=1,  # one call after the other: the stop lands between two
    )


def _request(model: FakeModelServer[SecondHeld]) -> dict[str, Any]:
    base = {"task": TASK, "api": "openai", "base_url": f"{model.url}/v1", "model": "m"}
    return {**base, "repeats": 3}


def test_close_interrupts_a_generation_and_resume_asks_only_what_is_missing(
    tmp_path: Path, model: FakeModelServer[SecondHeld]
) -> None:
    settings = _settings(tmp_path, model)
    ctx = ServiceContext.open(settings)
    token = create_token(ctx.db, "submitter", "gen")[0]
    headers = {"Authorization": f"Bearer {token}"}
    with serve_in_thread(create_app(ctx)) as url, Http(base_url=url, timeout=60) as client:
        posted = client.post("/v1/generations", json=_request(model), headers=headers)
        assert posted.status_code == 202, posted.text
        job_id = posted.json()["job_id"]
        assert model.model.second_asked.wait(60)
    closer = threading.Thread(target=ctx.close, kwargs={"grace_s": 60})
    closer.start()
    assert ctx.stopping.wait(60)  # the context is stopping: the held call may now answer
    model.model.release.set()
    closer.join(90)
    assert not closer.is_alive()

    ctx2 = ServiceContext.open(settings)
    try:
        with ctx2.db.read() as s:
            row = s.get(GenerationJobRow, job_id)
            assert row is not None
            assert (row.state, row.done) == ("interrupted", 2)  # the call in flight was stored
        with (
            serve_in_thread(create_app(ctx2)) as url,
            Http(base_url=url, timeout=60) as client,
        ):
            view = client.get(f"/v1/generations/{job_id}", headers=headers).json()
            assert view["state"] == "interrupted" and view["resumable"] is True
            resumed = client.post(f"/v1/generations/{job_id}/resume", headers=headers)
            assert resumed.status_code == 202, resumed.text
            assert resumed.json()["state"] == "running"
            done = _wait_done(client, job_id, headers)
            again = client.post(f"/v1/generations/{job_id}/resume", headers=headers)
            assert again.status_code == 422  # only an interrupted job resumes
        assert done["state"] == "done" and len(done["run_ids"]) == 3
        with ctx2.db.read() as s:
            keys = sorted(str(k) for k in s.scalars(select(GenerationRow.case_key)))
        assert keys == [f"{job_id}:{r}" for r in (1, 2, 3)]  # one generation per repeat
        assert model.model.calls == 3  # the two stored repeats were not asked again
        sent = [r.headers.get("idempotency-key") for r in model.requests]
        assert None not in sent and len(set(sent)) == 3  # one key per repeat
    finally:
        ctx2.close()


def _wait_done(client: httpx.Client, job_id: str, headers: dict[str, str]) -> dict[str, Any]:
    """Follow the job with ``wait`` semantics: poll until it leaves ``running``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view: dict[str, Any] = client.get(f"/v1/generations/{job_id}", headers=headers).json()
        if view["state"] != "running":
            return view
        time.sleep(0.1)
    raise AssertionError(f"generation {job_id} never ended")
