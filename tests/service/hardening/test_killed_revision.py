"""A ``regua serve`` killed (SIGKILL) while a render-and-revise round's call is in flight.

Each round's call has its own ``Idempotency-Key`` (job, case, round) and is recorded before it
is sent. The API that starts again resumes the generation: the first answer and the round
already stored are never asked again; the round cut off by the kill is sent again with its first
send's key and counted as re-sent; every round ends up with exactly one stored run.

The server killed is a real ``regua serve`` subprocess on SQLite with the real pipeline
(checks, sandboxed render: a round needs the previous run's frames); the server that starts
after it runs ``regua serve``'s own start on a thread of the test's process without pipeline
workers (the cut-off round needs only the frames already stored, and its own run is not what is
tested), so it starts neither an interpreter nor a render pool. A local fake model answers the
broken drawing first, the fixed one once it is shown a frame, and holds the second round's call
until the test opens it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.llm.testing import FakeModelServer, Request, serving
from service.api.client import read_token
from service.generation.calls import CallSlot
from service.storage import GenerationRow, ModelCallRow, RunRevisionRow
from tests.helpers.api_client import JsonClient
from tests.helpers.revise import BROKEN, FIXED, TASK, revise_task_yaml
from tests.helpers.server import Served, env_settings, require_real_rendering, serve_here
from tests.service.hardening import killing
from tests.service.hardening.killing import Gate, keys_sent, kill_hard, sqlite_db, wait_until

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
ROUNDS = 2


def round_of(request: Request) -> int:
    """The round a request asks for: how many answers of the model it already carries."""
    messages = request.json.get("messages") or []
    return sum(1 for m in messages if m.get("role") == "assistant")


def _answer(request: Request) -> str:
    return FIXED if request.images() else BROKEN


@pytest.fixture
def model() -> Iterator[FakeModelServer[Gate]]:
    with serving(Gate(free=2, reply=_answer)) as server:  # round 0 and round 1 answer at once
        yield server


def _env(tmp_path: Path, model: FakeModelServer[Gate]) -> dict[str, str]:
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "revise-mini.yaml").write_text(revise_task_yaml(), encoding="utf-8")
    return {
        "REGUA_TASKS_DIR": str(tasks),
        "REGUA_GENERATION_BACKOFF_S": "0.01",
        "REGUA_GENERATION_BASE_URLS": f"{model.url}/v1",
        "REGUA_SUBMIT_RATE_PER_MINUTE": "0",
    }


@contextmanager
def _serve_again(tmp_path: Path, model: FakeModelServer[Gate]) -> Iterator[JsonClient]:
    """The server that starts after the kill, on the same data folder (the same start as
    ``regua serve``, on a thread of the test's process), without pipeline workers: the last
    round's call needs the frames the killed server stored, and nothing after it is asked."""
    env = {**_env(tmp_path, model), "REGUA_SERVE_WORKER": "false"}
    data = tmp_path / "data"
    with serve_here(env_settings(data, env)) as url, JsonClient(url, read_token(data)) as client:
        yield client


def _sends(tmp_path: Path) -> list[tuple[int, int, bool]]:
    """(round, attempt, done) of every recorded send."""
    db = sqlite_db(tmp_path / "data")
    try:
        with db.read() as s:
            rows = s.execute(
                select(ModelCallRow.round, ModelCallRow.attempt, ModelCallRow.done_at.is_not(None))
            ).all()
        return sorted((int(r), int(a), bool(d)) for r, a, d in rows)
    finally:
        db.dispose()


def test_a_killed_revision_resumes_without_asking_a_stored_round_again(
    tmp_path: Path, model: FakeModelServer[Gate]
) -> None:
    """A server SIGKILLed with round 2's call in flight: the next server's start resumes the
    generation, rounds 0 and 1 are never asked again, round 2 is sent again under its first
    send's key and counted as re-sent, and each of the three rounds has one stored run."""
    require_real_rendering()
    request = {"task": TASK, "api": "openai", "base_url": f"{model.url}/v1", "model": "reviser"}
    first = Served(tmp_path / "data", **_env(tmp_path, model))
    try:
        with first.client() as client:
            job_id = client.generate({**request, "repeats": 1, "revise": ROUNDS})["job_id"]
        wait_until(lambda: model.model.held == 1, 240, "the second round's call in flight")
        assert _sends(tmp_path) == [(0, 1, True), (1, 1, True), (2, 1, False)]
        kill_hard(first)
    finally:
        first.stop()
    model.model.open()

    with _serve_again(tmp_path, model) as client:  # its start resumes the generation
        view = killing.finished_generation(client, job_id, 240)

    assert view["state"] == "done" and view["resent_calls"] == 1, view
    (chain,) = view["chains"]
    assert len(chain["run_ids"]) == 1 + ROUNDS and chain["stopped"] is None
    rounds = Counter(round_of(r) for r in model.requests)
    assert rounds == {0: 1, 1: 1, 2: 2}  # stored rounds never asked again; the cut-off one twice
    keys = [CallSlot(job_id, f"{job_id}:1", r).key for r in range(1 + ROUNDS)]
    assert keys_sent(model) == {keys[0]: 1, keys[1]: 1, keys[2]: 2}  # one key per round
    assert _sends(tmp_path) == [(0, 1, True), (1, 1, True), (2, 1, True), (2, 2, True)]
    db = sqlite_db(tmp_path / "data")
    try:
        with db.read() as s:
            revised = sorted(int(r) for r in s.scalars(select(RunRevisionRow.round)))
            generated = len(s.scalars(select(GenerationRow.id)).all())
    finally:
        db.dispose()
    assert revised == [1, 2] and generated == 1 + ROUNDS  # one stored run per round
