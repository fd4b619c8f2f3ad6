"""A ``regua serve`` killed (SIGKILL) while its generation's model calls are in flight.

Was: a model call in flight at a kill was simply sent again on resume (12 extra calls for 120
cases over 12 kills), and nobody could tell. Now every call is recorded before it is sent
(``model_calls``) with an ``Idempotency-Key`` stable per case, the API resumes the killed
generation when it starts again (embedded), the calls cut off are sent again with their first
send's key, and the re-sent calls are counted: in the generation JSON and the CLI line; for an
experiment (interrupted at the start, resumed by posting the file again) in its JSON, its report
JSON and its report page.

The server killed is a real ``regua serve`` subprocess on SQLite without pipeline workers
(nothing renders: the generations alone are under test); the server that starts after it runs
``regua serve``'s own start on a thread of the test's process (no second interpreter start,
~3 CPU s). A real local fake model on loopback holds the calls the test wants in flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from regua.llm.testing import FakeModelServer, serving
from regua.views.experiments import ExperimentProgress
from regua.views.jobs import GenerationJobView
from service.api.client import read_token
from service.cli.experiment_cmd import status_line
from service.cli.generate_cmd import resent_line
from service.generation.calls import CallSlot
from service.generation.orphans import EXPERIMENT_CAUSE
from service.storage import ExperimentRow, GenerationJobRow, GenerationRow, ModelCallRow
from tests.helpers.api_client import JsonClient
from tests.helpers.server import Served, env_settings, serve_here
from tests.service.hardening import killing
from tests.service.hardening.killing import Gate, keys_sent, kill_hard, sqlite_db, wait_until

pytestmark = [pytest.mark.heavy]
TASK = "pelican-bicycle-structured@1"
REPEATS = 6


@pytest.fixture
def model() -> Iterator[FakeModelServer[Gate]]:
    with serving(Gate(free=2)) as server:
        yield server


def _env(model: FakeModelServer[Gate]) -> dict[str, str]:
    return {
        "REGUA_SERVE_WORKER": "false",
        "REGUA_GENERATION_CONCURRENCY": "2",
        "REGUA_GENERATION_BACKOFF_S": "0.01",
        "REGUA_GENERATION_BASE_URLS": f"{model.url}/v1",
        "REGUA_SUBMIT_RATE_PER_MINUTE": "0",
    }


def _serve(data: Path, model: FakeModelServer[Gate]) -> Served:
    """The server the test kills: a ``regua serve`` subprocess."""
    return Served(data, **_env(model))


@contextmanager
def _serve_again(data: Path, model: FakeModelServer[Gate]) -> Iterator[JsonClient]:
    """The server that starts after the kill, on the same data folder (the same start as
    ``regua serve``, on a thread of the test's process): a client of it."""
    with (
        serve_here(env_settings(data, _env(model))) as url,
        JsonClient(url, read_token(data)) as client,
    ):
        yield client


def _calls(data: Path) -> list[tuple[str, int, int, bool]]:
    """(case key, round, attempt, done) of every recorded send, in order."""
    db = sqlite_db(data)
    try:
        with db.read() as s:
            rows = s.execute(
                select(
                    ModelCallRow.case_key,
                    ModelCallRow.round,
                    ModelCallRow.attempt,
                    ModelCallRow.done_at.is_not(None),
                ).order_by(ModelCallRow.case_key, ModelCallRow.attempt)
            ).all()
        return [(str(k), int(r), int(a), bool(d)) for k, r, a, d in rows]
    finally:
        db.dispose()


def test_a_killed_generation_resumes_with_each_case_stored_once_and_resends_counted(
    tmp_path: Path, model: FakeModelServer[Gate]
) -> None:
    """A server SIGKILLed with two of six calls in flight: the next server's start resumes the
    generation, each case ends with exactly one stored result, the two cut-off calls are sent
    again under their first send's key (the others once), and the view and the CLI line count
    2 re-sent calls."""
    data = tmp_path / "data"
    first = _serve(data, model)
    try:
        request = {"task": TASK, "api": "openai", "base_url": f"{model.url}/v1", "model": "m"}
        with first.client() as client:
            job_id = client.generate({**request, "repeats": REPEATS})["job_id"]
        wait_until(lambda: model.model.held == 2, 60, "two calls in flight")
        # calls 1 and 2 answered and stored; 3 and 4 recorded and in flight, never answered
        recorded = _calls(data)
        assert [(k.rsplit(":", 1)[1], d) for k, _, _, d in recorded] == [
            ("1", True),
            ("2", True),
            ("3", False),
            ("4", False),
        ]
        kill_hard(first)
    finally:
        first.stop()
    model.model.open()  # the held calls answer a dead process

    with _serve_again(data, model) as client:  # its start resumes the generation left running
        view = killing.finished_generation(client, job_id, 60)

    assert view["state"] == "done" and len(view["run_ids"]) == REPEATS
    assert view["resent_calls"] == 2  # the two calls the kill cut off
    cases = [f"{job_id}:{r}" for r in range(1, REPEATS + 1)]
    db = sqlite_db(data)
    try:
        with db.read() as s:
            stored = dict(
                s.execute(
                    select(GenerationRow.case_key, func.count()).group_by(GenerationRow.case_key)
                ).all()
            )
            row = s.get(GenerationJobRow, job_id)
            assert row is not None and row.error is None
    finally:
        db.dispose()
    assert stored == dict.fromkeys(cases, 1)  # every case exactly one stored result

    keys = [CallSlot(job_id, case).key for case in cases]
    sent = keys_sent(model)
    assert None not in sent and set(sent) == set(keys)  # the server saw each case's key
    assert [sent[k] for k in keys] == [1, 1, 2, 2, 1, 1]  # the cut-off ones twice, same key
    attempts = {(k.rsplit(":", 1)[1], a) for k, _, a, d in _calls(data) if d}
    assert attempts >= {("3", 2), ("4", 2)} and all(d for *_, d in _calls(data))
    line = resent_line(GenerationJobView.model_validate(view))
    assert line.startswith("2 model call(s) sent again")


EXPERIMENT = {"id": "killed", "items": [TASK], "repeats": 2}
URL = "/v1/experiments/killed@default"


def test_a_killed_experiment_is_interrupted_at_start_and_its_resent_calls_are_shown(
    tmp_path: Path,
) -> None:
    """A server SIGKILLed with an experiment's second case in flight: the next server's start
    marks the experiment interrupted with the cause; posting the file again resumes it, the
    cut-off call is sent again under the same key, and its JSON, report JSON, report page and
    CLI status line show 1 re-sent call."""
    data = tmp_path / "data"
    with serving(Gate(free=1)) as model:
        arm = {"name": "a", "model": {"api": "openai", "model": "m", "base_url": f"{model.url}/v1"}}
        body = {"experiment": {**EXPERIMENT, "arms": [arm]}}
        first = _serve(data, model)
        try:
            with first.client() as client:
                client.typed.request("POST", "/v1/experiments", json=body)
            wait_until(lambda: model.model.held == 1, 60, "the second case's call in flight")
            wait_until(
                lambda: sorted(d for *_, d in _calls(data)) == [False, True],
                60,
                "the first case stored, the second in flight",
            )
            kill_hard(first)
        finally:
            first.stop()
        model.model.open()

        with _serve_again(data, model) as client:
            found: dict[str, Any] = client.typed.request("GET", URL)
            assert (found["status"], found["error"]) == ("interrupted", EXPERIMENT_CAUSE)
            assert found["generated"] == 0  # a case is stored once its arm's repeats are
            again = client.typed.request("POST", "/v1/experiments", json=body)
            assert again["resumed"] is True
            wait_until(
                lambda: client.typed.request("GET", URL)["generated"] == 2,
                60,
                "the resumed experiment's cases",
            )
            progress = client.typed.request("GET", URL)
            report = client.typed.request("GET", f"{URL}/report")
            page = client.http.get(f"{URL}/report.html").text
        sent = keys_sent(model)

    assert progress["resent_calls"] == 1 and report["experiment"]["resent_calls"] == 1
    assert "1 model call(s) sent again" in page
    assert "1 model call(s) sent again" in status_line(ExperimentProgress(**progress))
    assert sorted(sent.values()) == [1, 2]  # two cases: the one cut off sent twice, same key
    db = sqlite_db(data)
    try:
        with db.read() as s:
            cases = s.scalar(select(func.count()).select_from(GenerationRow))
            status = s.scalar(select(ExperimentRow.status))
    finally:
        db.dispose()
    assert cases == 2 and status in ("evaluating", "done")


def test_the_start_hook_names_experiment_jobs_as_experiments_do() -> None:
    """The hook (which may not import experiments) uses the experiments' kind and states."""
    from service.experiments import admission
    from service.experiments import jobs as experiment_jobs
    from service.generation import orphans

    assert orphans.EXPERIMENT_KIND == experiment_jobs.KIND
    assert orphans.EXPERIMENT_GENERATING == admission.GENERATING
