"""Bounded background work: per-token shares of generations and experiments, ``wait`` on the
event loop.

Was: ``wait: true`` generations held a server thread each (80 against a slow endpoint made
``/v1/health``, ``/v1/tasks`` and every page time out), background generation had no per-token
cap (30 posts of ``repeats: 1000`` queued 30,000 runs and 150 threads), and a ``wait``
generation's ``status_url`` answered 404. Now a waiting request holds no thread, a token's
share is 4 running generations / 200 model calls and 2 generating experiments with at most
``REGUA_EXPERIMENT_CASES_PER_TOKEN`` cases not generated yet (429 with ``Retry-After`` past
it, 422 for one request larger than the share), and nothing is stored for a refused request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from regua.llm.testing import FakeModelServer, Reply, Request, serving
from regua.settings import Settings
from service.access.tokens import create_token
from service.context import ServiceContext
from service.generation import jobs
from service.server import create_app
from service.storage import Artifact, ExperimentCaseRow, ExperimentRow, Run
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

TASK = "pelican-bicycle-structured@1"
SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
WAITERS = 50
"""More than the server's thread pool (40): before, these held every one of its threads."""


class Gated:
    """A model that answers only once its gate is open (no wall-clock sleeps)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, request: Request) -> Reply:
        del request
        assert self.gate.wait(120), "the test never opened the gate"
        return Reply(text=SVG)


@dataclass
class Served:
    url: str
    ctx: ServiceContext
    model: FakeModelServer[Gated]

    def client(self, role: str = "submitter") -> httpx.Client:
        token = create_token(self.ctx.db, role, role)[0]
        headers = {"Authorization": f"Bearer {token}"}
        return Http(base_url=self.url, headers=headers, timeout=120)

    def generation(self, **extra: Any) -> dict[str, Any]:
        base = {"task": TASK, "api": "openai", "base_url": f"{self.model.url}/v1", "model": "m"}
        return {**base, **extra}


@contextmanager
def _serve(data: Path, **settings: Any) -> Iterator[Served]:
    """A service whose submitters may generate against the gated model."""
    with serving(Gated()) as model:
        config = Settings(
            data_dir=data,
            generation_base_urls=[f"{model.url}/v1"],
            generation_backoff_s=0.01,
            **settings,
        )
        ctx = ServiceContext.open(config)
        try:
            with serve_in_thread(create_app(ctx)) as url:
                yield Served(url, ctx, model)
                model.model.gate.set()
                _until(lambda: jobs.running(ctx) == 0)
        finally:
            ctx.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """The service with the default shares."""
    with _serve(tmp_path / "data") as it:
        yield it


def _until(done: Any, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


def test_waiting_generations_hold_no_server_thread(served: Served) -> None:
    clients = [served.client() for _ in range(WAITERS)]
    before = jobs.running(served.ctx)
    with ThreadPoolExecutor(WAITERS) as pool:
        futures = [
            pool.submit(c.post, "/v1/generations", json=served.generation(wait=True))
            for c in clients
        ]
        _until(lambda: jobs.running(served.ctx) - before >= WAITERS)  # every request is waiting
        with Http(base_url=served.url, timeout=10) as probe:
            assert probe.get("/v1/health").status_code == 200  # answered meanwhile
            assert probe.get("/login").status_code == 200
        with served.client() as other:
            assert other.get("/v1/tasks").status_code == 200
        assert not any(f.done() for f in futures)  # ... while all of them still wait
        served.model.model.gate.set()
        answers = [f.result(timeout=120) for f in futures]
    assert [a.status_code for a in answers] == [201] * WAITERS
    first = answers[0].json()
    assert first["state"] == "done" and len(first["run_ids"]) == 1
    status = clients[0].get(first["status_url"])  # was: 404 for a wait generation
    assert status.status_code == 200 and status.json()["run_ids"] == first["run_ids"]
    for c in clients:
        c.close()


def test_a_tokens_share_of_generations_is_bounded(served: Served) -> None:
    with served.client() as mine, served.client() as theirs:
        accepted = [mine.post("/v1/generations", json=served.generation()) for _ in range(4)]
        assert [a.status_code for a in accepted] == [202] * 4
        running = jobs.running(served.ctx)
        refused = mine.post("/v1/generations", json=served.generation())
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "30"
        assert refused.json()["error"] == "queue_share_full"
        assert "this token has 4 generation(s) running" in refused.json()["detail"]
        assert theirs.post("/v1/generations", json=served.generation()).status_code == 202
        too_big = theirs.post("/v1/generations", json=served.generation(repeats=201))
        assert too_big.status_code == 422 and "at most 200 per token" in too_big.text
        assert jobs.running(served.ctx) == running + 1  # the refusals started nothing (theirs did)
        served.model.model.gate.set()
        _until(lambda: jobs.running(served.ctx) == 0)
        assert mine.post("/v1/generations", json=served.generation()).status_code == 202


def experiment(served: Served, name: str, repeats: int = 1) -> dict[str, Any]:
    model = {"api": "openai", "base_url": f"{served.model.url}/v1", "model": "m"}
    arms = [{"name": "a", "model": model}]
    return {"id": name, "items": [TASK], "arms": arms, "repeats": repeats}


def test_a_tokens_share_of_experiments_is_bounded(served: Served) -> None:
    with served.client() as mine:
        for name in ("one", "two"):
            got = mine.post("/v1/experiments", json={"experiment": experiment(served, name)})
            assert got.status_code == 202, got.text
        with served.ctx.db.read() as s:
            stored = s.scalar(select(func.count(ExperimentRow.id)))
        third = mine.post("/v1/experiments", json={"experiment": experiment(served, "three")})
        assert third.status_code == 429 and third.headers["Retry-After"] == "60"
        assert "this token has 2 experiment(s) generating" in third.json()["detail"]
        with served.ctx.db.read() as s:
            assert s.scalar(select(func.count(ExperimentRow.id))) == stored  # nothing stored
        served.model.model.gate.set()
        _until(lambda: mine.get("/v1/experiments/two@default").json()["generated"] == 1)
        _until(
            lambda: (
                mine.post(
                    "/v1/experiments", json={"experiment": experiment(served, "three")}
                ).status_code
                == 202
            )
        )


CASES_CAP = 3
"""``REGUA_EXPERIMENT_CASES_PER_TOKEN`` of the next test."""


def _stored(served: Served) -> tuple[object, ...]:
    """Rows of experiments, their cases, runs and artifacts, and the blobs on disk."""
    tables = (ExperimentRow, ExperimentCaseRow, Run, Artifact)
    with served.ctx.db.read() as s:
        rows = [s.scalar(select(func.count()).select_from(t)) for t in tables]
    blobs = served.ctx.settings.resolved_artifact_dir()
    return (*rows, sorted(str(p) for p in blobs.rglob("*")))


def test_a_tokens_share_of_experiment_cases_is_bounded(tmp_path: Path) -> None:
    with (
        _serve(tmp_path / "data", experiment_cases_per_token=CASES_CAP) as served,
        served.client() as mine,
        served.client() as theirs,
    ):

        def post(client: httpx.Client, name: str, repeats: int) -> httpx.Response:
            doc = experiment(served, name, repeats)
            return client.post("/v1/experiments", json={"experiment": doc})

        before = _stored(served)
        big = post(mine, "big", CASES_CAP + 1)  # larger than the whole share: never fits
        assert big.status_code == 422 and big.json()["error"] == "batch_too_large"
        assert "Retry-After" not in big.headers
        assert big.json()["detail"] == (
            "arms x items x repeats (1 x 1 x 4): 4 cases in one experiment; at most 3 per "
            "token at a time (REGUA_EXPERIMENT_CASES_PER_TOKEN): split it"
        )
        assert _stored(served) == before  # nothing stored
        assert post(mine, "one", 2).status_code == 202  # 2 cases in flight (the model waits)
        held = _stored(served)
        refused = post(mine, "two", 2)  # 2 + 2 > 3
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
        assert refused.json()["error"] == "queue_share_full"
        assert (
            "this token has 1 experiment(s) generating with 2 case(s) left"
            in (refused.json()["detail"])
        )
        assert _stored(served) == held  # no row, no case, no run, no blob
        with served.ctx.db.read() as s:
            assert s.get(ExperimentRow, "two@default") is None
        assert post(theirs, "theirs", 2).status_code == 202  # another token's share is its own
        served.model.model.gate.set()
        _until(lambda: mine.get("/v1/experiments/one@default").json()["generated"] == 2)
        assert post(mine, "two", 2).status_code == 202  # its cases are generated: room again
