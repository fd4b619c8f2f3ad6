"""A ``regua serve`` killed (SIGKILL) while its generation's model calls are in flight.

Was: a model call in flight at a kill was simply sent again on resume (12 extra calls for 120
cases over 12 kills), and nobody could tell. Now every call is recorded before it is sent
(``model_calls``) with an ``Idempotency-Key`` stable per case, the API resumes the killed
generation when it starts again (embedded), the calls cut off are sent again with their first
send's key, and the re-sent calls are counted: in the generation JSON and the CLI line; for an
experiment (interrupted at the start, resumed by posting the file again) in its JSON, its report
JSON and its report page.

Real subprocesses on SQLite without pipeline workers (nothing renders: the generations alone
are under test), a real local fake model on loopback that holds the calls the test wants in
flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from regua.llm.testing import FakeModelServer, serving
from regua.views.experiments import ExperimentProgress
from regua.views.jobs import GenerationJobView
from service.cli.experiment_cmd import status_line
from service.cli.generate_cmd import resent_line
from service.generation.calls import CallSlot
from service.generation.orphans import EXPERIMENT_CAUSE
from service.storage import ExperimentRow, GenerationJobRow, GenerationRow, ModelCallRow
from tests.helpers.server import Served
from tests.service.hardening import killing
from tests.service.hardening.killing import Gate, keys_sent, kill_hard, sqlite_db, wait_until

pytestmark = [pytest.mark.heavy]
TASK = "pelican-bicycle-structured@1"
REPEATS = 6


@pytest.fixture
def model() -> Iterator[FakeModelServer[Gate]]:
    with serving(Gate(free=2)) as server:
        yield server


def _serve(data: Path, model: FakeModelServer[Gate]) -> Served:
    return Served(
        data,
        REGUA_SERVE_WORKER="false",
        REGUA_GENERATION_CONCURRENCY="2",
        REGUA_GENERATION_BACKOFF_S="0.01",
        REGUA_GENERATION_BASE_URLS=f"{model.url}/v1",
        REGUA_SUBMIT_RATE_PER_MINUTE="0",
    )


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

    # a second server: its start resumes the generation the kill left running
    view = killing.finished_generation(_serve(data, model), job_id, 60)

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

        second = _serve(data, model)
        try:
            with second.client() as client:
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
        finally:
            second.stop()
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
