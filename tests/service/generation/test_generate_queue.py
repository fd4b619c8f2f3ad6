"""Generation and experiment jobs on the procrastinate ``generate`` queue (PostgreSQL; skipped
with the reason when it does not answer): real ``regua worker`` processes, and a real
``regua serve --no-worker`` process wherever the API is killed, on a fresh database per test.
An API that is never killed (it only defers a job, or reads what the workers stored, or is the
one that starts again) is ``regua serve``'s own start on a thread of the test's process
(:meth:`Fleet.api_here`), and the workers run the judge lane alone (the ``generate`` queue and
the maintenance task): the generated runs are not what is tested, so nothing renders. Each
process start saved is ~3 CPU s.

An API process without workers defers each job onto the ``generate`` queue in the transaction
that stores it; the API is then killed (SIGKILL) and a ``regua worker`` started afterwards runs
both jobs to their end, and a new API process reports the stored generation. A worker killed
while its generation waits on the model leaves the job ``doing``; once its heartbeat is older
than the stalled-job timeout another worker takes the job over and finishes it, with one
generation per repeat (the repeats are stored under case keys) and every call sent again carries
its repeat's ``Idempotency-Key``. An API that starts again interrupts (with the cause) only the
generations and experiments whose queue job neither waits nor runs; the others are left to the
workers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from regua.llm.testing import FakeModelServer, Reply, Request, serving
from service.generation.orphans import EXPERIMENT_CAUSE, KILLED_CAUSE
from tests.helpers.fleet import STALLED_S, Fleet
from tests.helpers.pg import fresh_pg_database

pytestmark = [pytest.mark.heavy, pytest.mark.postgres]
TASK = "pelican-bicycle-structured@1"
SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
EXPERIMENT = {
    "id": "queued",
    "items": [TASK],
    "repeats": 2,
    "arms": [{"name": "a", "model": {"api": "mock", "model": "m-a"}}],
}
JOBS_ON_QUEUE = (
    "SELECT count(*) FROM procrastinate_jobs WHERE queue_name = 'generate' "
    "AND task_name = 'regua.generate' AND status = CAST(:status AS procrastinate_job_status)"
)


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """A fleet whose workers run the judge lane alone (the ``generate`` queue and the
    maintenance task): the generated runs wait on the render queue, nothing renders."""
    for url in fresh_pg_database("regua_generate"):
        f = Fleet(tmp_path, url, {"REGUA_WORKER_LANES": "judge"})
        try:
            yield f
        finally:
            f.close()


def test_jobs_deferred_by_a_killed_api_are_run_by_a_worker(fleet: Fleet) -> None:
    """A generation and an experiment deferred by an API process without workers wait on the
    queue, survive the API's SIGKILL, are both run to their end by a worker started afterwards
    (3 generations, 2 cases), and another API reports the stored generation as done."""
    fleet.start_api()
    with fleet.client() as client:
        job = client.generate({"task": TASK, "api": "mock", "model": "m", "repeats": 3})
        exp = client.typed.request("POST", "/v1/experiments", json={"experiment": EXPERIMENT})
    assert job["state"] == "running" and exp["experiment_id"] == "queued@default"
    assert fleet.count(JOBS_ON_QUEUE, status="todo") == 2  # no worker: both wait on the queue
    fleet.kill_api()

    fleet.start_worker()
    fleet.wait_for(
        lambda: fleet.count(JOBS_ON_QUEUE, status="succeeded") == 2, 180, "both generate jobs"
    )
    state = fleet.sql(
        "SELECT state, done, error FROM generation_jobs WHERE id = :id", id=job["job_id"]
    )
    assert state == [("done", 3, None)], fleet.logs()
    cases = fleet.count(
        "SELECT count(*) FROM experiment_cases WHERE experiment_id = 'queued@default'"
    )
    assert cases == 2
    status = fleet.sql("SELECT status FROM experiments WHERE id = 'queued@default'")[0][0]
    assert status in ("evaluating", "done")

    with fleet.api_here(), fleet.client() as client:  # another API reads the stored job
        view = client.generation(job["job_id"])
    assert view["state"] == "done" and len(view["run_ids"]) == 3


def test_a_restarted_api_interrupts_only_the_jobs_no_worker_runs(fleet: Fleet) -> None:
    """After an API process is killed, the start of the next API interrupts (with the cause,
    resumable) the generation whose queue job failed for good and the experiment whose job was
    cancelled, and leaves running the generations whose queue job waits or runs; nothing is
    deferred again or dropped."""
    fleet.start_api()
    with fleet.client() as client:
        waiting, doing, lost = (
            client.generate({"task": TASK, "api": "mock", "model": f"m{i}", "repeats": 1})["job_id"]
            for i in range(3)
        )
        client.typed.request("POST", "/v1/experiments", json={"experiment": EXPERIMENT})
    # a worker runs ``doing``; ``lost``'s queue job failed for good and the experiment's was
    # cancelled, both with their rows still saying they generate
    mark = (
        "UPDATE procrastinate_jobs SET status = CAST(:status AS procrastinate_job_status) "
        "WHERE args->'args'->>'job_id' = :id OR args->'args'->>'experiment_id' = :id"
    )
    with fleet.engine.begin() as conn:
        conn.execute(text(mark), {"status": "doing", "id": doing})
        conn.execute(text(mark), {"status": "failed", "id": lost})
        conn.execute(text(mark), {"status": "cancelled", "id": "queued@default"})
    fleet.kill_api()

    with fleet.api_here():  # its start looks for generate jobs nobody runs
        states = dict(
            (str(i), (s, e))
            for i, s, e in fleet.sql("SELECT id, state, error FROM generation_jobs")
        )
        assert states == {
            waiting: ("running", None),
            doing: ("running", None),
            lost: ("interrupted", KILLED_CAUSE),
        }
        exp = fleet.sql("SELECT status, error FROM experiments WHERE id = 'queued@default'")
        assert exp == [("interrupted", EXPERIMENT_CAUSE)]
        with fleet.client() as client:
            view = client.generation(lost)
    assert view["state"] == "interrupted" and view["resumable"] is True
    assert fleet.count(JOBS_ON_QUEUE, status="todo") == 1  # nothing deferred or dropped


class Held:
    """Answers with the SVG once ``release`` is set; counts the calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        del request
        with self.lock:
            self.calls += 1
        assert self.release.wait(120), "the test never released the model"
        return Reply(text=SVG)


@pytest.fixture
def model() -> Iterator[FakeModelServer[Held]]:
    with serving(Held()) as server:
        yield server


def test_a_generation_whose_worker_died_is_finished_by_another(
    fleet: Fleet, model: FakeModelServer[Held]
) -> None:
    """A worker SIGKILLed while its generation's call waits on the model leaves the job
    ``doing``; a second worker takes it over once the heartbeat is stale and finishes it, with
    one stored generation per repeat, no failed job, and every call sent again under its
    repeat's ``Idempotency-Key``."""
    request = {
        "task": TASK,
        "api": "openai",
        "base_url": f"{model.url}/v1",
        "model": "m",
        "repeats": 2,
    }
    with fleet.api_here(), fleet.client() as client:  # the API only defers the job
        job = client.generate(request)
    first = fleet.start_worker()
    fleet.wait_for(lambda: model.model.calls >= 1, 120, "the first worker's model call")
    assert fleet.count(JOBS_ON_QUEUE, status="doing") == 1
    fleet.kill9(first)  # dies while its call waits on the model
    model.model.release.set()
    fleet.start_worker()
    fleet.wait_for(
        lambda: fleet.count(JOBS_ON_QUEUE, status="succeeded") == 1,
        120 + 10 * STALLED_S,
        "the job taken over by the second worker",
    )
    assert fleet.sql("SELECT state FROM generation_jobs")[0][0] == "done"
    keys = fleet.sql("SELECT case_key, count(*) FROM generations GROUP BY case_key ORDER BY 1")
    assert keys == [(f"{job['job_id']}:1", 1), (f"{job['job_id']}:2", 1)]
    assert fleet.count(JOBS_ON_QUEUE, status="failed") == 0
    sent = [r.headers.get("idempotency-key") for r in model.requests]
    assert len(sent) > 2 and None not in sent  # the dead worker's calls were sent again ...
    assert len(set(sent)) == 2  # ... under their repeat's key: a provider answers each once
