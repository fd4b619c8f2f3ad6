"""Long work over HTTP answers 202 and a resource to poll, on the real pipeline:
re-scoring batches (``POST /v1/evaluations`` → ``GET /v1/evaluations/batches/{id}``) and
calibration jobs (``POST /v1/calibrations`` with a judge → ``GET /v1/calibrations/jobs/{id}``).
Bad requests are refused at once and open nothing; a job that fails is recorded as failed with
its error and the server keeps answering. Plus the job runner and the progress throttle."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

import judges
from judges.builtin import BUILTIN_PROFILES
from regua.errors import InputError
from service.context import ServiceContext
from service.evaluation.batches import BatchProgress, open_batch
from service.evaluation.rescore import RescoreOptions, rescore
from service.pipeline.jobs import CANCELLED, Job, JobRunner
from service.storage import CalibrationRunRow, Evaluation, RescoreBatch, RescoreItem, Run
from tests.helpers.runs import TASK, clone_run
from tests.service.conftest import World

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]

PANEL = "pelican-bicycle-default@1"
#: A vision-LLM profile for an API the judge does not speak: building the judge raises
#: (``VisionJudge.__init__``), a genuine failure of the work, registered like a plugin.
BROKEN_PROFILE = "vision-llm-nowhere@1"
BROKEN_PANEL = "pelican-bicycle-broken@1"
POLL_S = 30.0


def _register_broken() -> None:
    import dataclasses

    base = next(p for p in BUILTIN_PROFILES if p.id == "vision-llm-openai@1")
    params = {**base.params, "api": "nowhere"}
    if BROKEN_PROFILE not in {p.id for p in judges.list_profiles()}:
        judges.register_profile(
            dataclasses.replace(base, id=BROKEN_PROFILE, params=params, expected_hash=None)
        )
    judges.register_panel(
        judges.JudgePanel(
            id=BROKEN_PANEL,
            family="pelican-bicycle",
            assignments={"*": ("static@1", BROKEN_PROFILE)},
            description="A panel whose vision judge cannot be built.",
        )
    )


def _poll(client: httpx.Client, url: str, timeout_s: float = POLL_S) -> dict[str, Any]:
    """GET ``url`` until its state is no longer ``running`` (bounded)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = client.get(url)
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        if body["state"] != "running":
            return body
        assert time.monotonic() < deadline, f"still running after {timeout_s} s: {body}"
        time.sleep(0.05)


def _count(ctx: ServiceContext, column: Any) -> int:
    with ctx.db.read() as s:
        return int(s.scalar(select(func.count(column))) or 0)


def test_rescore_is_accepted_then_polled_until_done(world: World) -> None:
    ctx, ids, renderer = world.ctx, world.ids, world.renderer
    calls = renderer.calls
    admin = world.client("admin")
    with ctx.db.read() as s:
        before = dict(
            s.execute(select(Run.id, Run.current_evaluation_id).where(Run.id.in_(ids[:2]))).all()
        )
    body = {"task": TASK, "panel": PANEL, "runs": ids[:2], "note": "async"}
    res = admin.post("/v1/evaluations", json=body)
    assert res.status_code == 202, res.text
    accepted = res.json()
    batch_id = accepted["batch_id"]
    url = f"/v1/evaluations/batches/{batch_id}"
    expected = {"batch_id": batch_id, "state": "running", "runs": 2, "done": 0, "status_url": url}
    assert {k: accepted[k] for k in expected} == expected
    assert res.headers["location"] == url

    done = _poll(admin, url)
    assert done["state"] == "done", done
    assert done["done"] == done["runs"] == 2 and done["appended"] == 2
    assert done["rendered_nothing"] and renderer.calls == calls
    assert done["skipped"] == {} and done["judged"] >= 1 and done["elapsed_s"] >= 0
    assert done["task_ref"] == TASK and done["panel_id"] == PANEL and done["note"] == "async"
    assert "error" not in done
    with ctx.db.read() as s:
        assert s.scalar(select(func.count(Evaluation.id))) == 5
        items = s.scalars(select(RescoreItem).where(RescoreItem.batch_id == batch_id)).all()
        assert sorted(i.run_id for i in items) == sorted(ids[:2])
        for item in items:
            run = s.get(Run, item.run_id)
            new = s.get(Evaluation, item.evaluation_id)
            assert run is not None and new is not None
            assert run.current_evaluation_id == new.id and new.kind == "rescore"
            assert new.supersedes_id == item.previous_evaluation_id == before[item.run_id]
            assert s.get(Evaluation, before[item.run_id]) is not None  # the old one stays

    diff = admin.get("/v1/evaluations/diff", params={"a": f"previous:{batch_id}", "b": batch_id})
    assert diff.status_code == 200, diff.text
    assert diff.json()["runs_compared"] == 2

    listed = admin.get("/v1/evaluations/batches").json()["batches"]
    assert listed[0]["batch_id"] == batch_id and listed[0]["state"] == "done"
    assert listed[0]["status_url"] == url and "skipped" not in listed[0]
    assert admin.get("/v1/evaluations/batches/rs_nope").status_code == 404
    assert world.client("submitter").get(url).status_code == 403


def test_refused_requests_are_answered_at_once_and_open_no_batch(world: World) -> None:
    ctx, ids = world.ctx, world.ids
    admin = world.client("admin")
    body: dict[str, Any] = {"task": TASK, "panel": PANEL, "runs": ids[:1]}
    refused: dict[str, tuple[dict[str, Any], int]] = {
        "unknown panel": ({**body, "panel": "nope@1"}, 404),
        "unknown run": ({**body, "runs": [ids[0], "nope"]}, 404),
        "unknown rubric": ({**body, "rubric": "nope@1"}, 404),
        "rubric of another task": ({**body, "rubric": "pelican-bicycle-static@1"}, 422),
        "missing field": ({"task": TASK}, 422),
    }
    for why, (payload, status) in refused.items():
        for wait in (False, True):
            res = admin.post("/v1/evaluations", json={**payload, "wait": wait})
            assert res.status_code == status, (why, wait, res.text)
    submitter = world.client("submitter")
    assert submitter.post("/v1/evaluations", json=body).status_code == 403
    assert _count(ctx, RescoreBatch.id) == 0
    assert _count(ctx, Evaluation.id) == 3


def test_a_failing_job_is_recorded_and_the_server_keeps_answering(world: World) -> None:
    ctx, ids = world.ctx, world.ids
    _register_broken()
    admin = world.client("admin")
    res = admin.post("/v1/evaluations", json={"task": TASK, "panel": BROKEN_PANEL})
    assert res.status_code == 202, res.text  # the request is well-formed: the work fails
    failed = _poll(admin, res.headers["location"])
    assert failed["state"] == "failed", failed
    assert failed["error"].startswith("ValueError: ") and "'nowhere'" in failed["error"]
    assert failed["runs"] == 3 and failed["done"] == 0
    assert _count(ctx, Evaluation.id) == 3  # nothing appended, no pointer moved

    assert admin.get("/v1/health").status_code == 200
    again = admin.post("/v1/evaluations", json={"task": TASK, "panel": PANEL, "runs": ids[:1]})
    assert again.status_code == 202
    assert _poll(admin, again.json()["status_url"])["state"] == "done"  # the runner goes on
    states = [b["state"] for b in admin.get("/v1/evaluations/batches").json()["batches"]]
    assert states == ["done", "failed"]


def test_calibration_job_is_polled_until_its_run_is_stored(world: World) -> None:
    """The real ``calibrate()`` over the bundled set, cheapest judge: static@1 answers none of
    the set's criteria, so nothing is rendered and the run (with no scored item) is stored."""
    ctx = world.ctx
    _register_broken()
    admin = world.client("admin")
    body = {"judge": "static@1", "repeats": 1, "n_boot": 100}
    res = admin.post("/v1/calibrations", json=body)
    assert res.status_code == 202, res.text
    accepted = res.json()
    url = f"/v1/calibrations/jobs/{accepted['job_id']}"
    assert accepted["state"] == "running" and accepted["status_url"] == url
    assert res.headers["location"] == url

    done = _poll(admin, url)
    assert done["state"] == "done", done
    assert done["judge"] == "static@1" and done["elapsed_s"] >= 0 and "error" not in done
    stored = admin.get(f"/v1/calibrations/{done['calibration_id']}")
    assert stored.status_code == 200, stored.text
    assert stored.json()["profile_id"] == "static@1"
    jobs = admin.get("/v1/calibrations/jobs").json()["jobs"]
    assert [j["job_id"] for j in jobs] == [accepted["job_id"]]

    # refused at once: unknown judge, unknown set; unknown job
    assert admin.post("/v1/calibrations", json={"judge": "nope@1"}).status_code == 404
    assert admin.post("/v1/calibrations", json={**body, "set": "/no/such"}).status_code == 404
    assert admin.get("/v1/calibrations/jobs/cj_nope").status_code == 404
    assert admin.get(f"/v1/calibrations/jobs/{jobs[0]['job_id']}x").status_code == 404

    # a judge that cannot be built fails the job, with the error
    res = admin.post("/v1/calibrations", json={**body, "judge": BROKEN_PROFILE})
    assert res.status_code == 202, res.text
    failed = _poll(admin, res.json()["status_url"])
    assert failed["state"] == "failed" and failed["error"].startswith("ValueError: ")
    assert "calibration_id" not in failed
    assert _count(ctx, CalibrationRunRow.id) == 1

    # wait: inside the request, 201 with the stored run
    waited = admin.post("/v1/calibrations", json={**body, "wait": True})
    assert waited.status_code == 201, waited.text
    assert waited.json()["profile_id"] == "static@1"


def _state(job: Job) -> str:
    """The job's state read afresh (it moves on another thread)."""
    return job.state


def test_job_runner_records_failures_runs_one_at_a_time_and_cancels_on_close() -> None:
    runner = JobRunner()
    release = threading.Event()
    running: list[str] = []
    cancelled: list[Job] = []

    def blocker() -> dict[str, Any]:
        running.append("blocker")
        release.wait(POLL_S)
        return {"answer": 42}

    def boom() -> None:
        raise InputError("boom")

    def never_run() -> None:
        running.append("queued")

    first = runner.submit("test", blocker)
    queued = runner.submit("test", never_run, on_cancel=cancelled.append)
    deadline = time.monotonic() + POLL_S
    while not running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert running == ["blocker"] and queued.state == "running"  # one at a time
    closing = threading.Thread(target=runner.close)
    closing.start()
    time.sleep(0.2)  # close() has cancelled the queued job and waits for the running one
    release.set()
    closing.join(POLL_S)
    assert first.state == "done" and first.view().model_dump()["answer"] == 42
    assert _state(queued) == "failed" and queued.error == CANCELLED and cancelled == [queued]
    assert running == ["blocker"]
    with pytest.raises(Exception, match="closed"):
        runner.submit("test", boom)

    other = JobRunner()
    failing = other.submit("test", boom)
    after = other.submit("test", lambda: {"ok": True})
    deadline = time.monotonic() + POLL_S
    while after.state == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    other.close()
    assert failing.state == "failed" and failing.error == "InputError: boom"
    assert after.state == "done" and after.result == {"ok": True}
    assert [j.id for j in other.jobs()] == [after.id, failing.id]


def test_progress_is_written_at_most_every_100_runs_or_half_second(world: World) -> None:
    ctx = world.ctx
    open_batch(ctx.db, "rs_progress", task_ref=TASK, panel=judges.get_panel(PANEL), runs=500)
    tracker = BatchProgress("rs_progress", 500, every_s=3600.0)
    with ctx.db.write() as s:
        assert not tracker.write_if_due(s, 99)
        assert tracker.write_if_due(s, 100)
        assert not tracker.write_if_due(s, 150)
    with ctx.db.read() as s:
        batch = s.get(RescoreBatch, "rs_progress")
        assert batch is not None
        assert batch.summary["state"] == "running" and batch.summary["done"] == 100
    timed = BatchProgress("rs_progress", 500, every_s=0.0)
    with ctx.db.write() as s:
        assert timed.write_if_due(s, 1)
    with pytest.raises(InputError):  # a batch that has run is never reopened
        with ctx.db.write() as s:
            batch = s.get(RescoreBatch, "rs_progress")
            assert batch is not None
            batch.summary = {"state": "done"}
        open_batch(ctx.db, "rs_progress", task_ref=TASK, panel=judges.get_panel(PANEL), runs=1)


def test_progress_is_stored_while_a_batch_runs(world: World) -> None:
    """250 runs: the first chunk of 200 is written with the batch's progress, read back while
    the rest is still being read (from rescore's own progress callback, between writes)."""
    ctx, ids = world.ctx, world.ids
    clone_run(ctx.db, ids[0], 247)
    seen: dict[str, Any] = {}

    def watch(done: int, _total: int) -> None:
        if done == 201:
            with ctx.db.read() as s:
                batch = s.get(RescoreBatch, "rs_watch")
                assert batch is not None
                seen.update(batch.summary)

    options = RescoreOptions(batch_id="rs_watch", progress=watch)
    result = rescore(ctx.db, ctx.blobs, task_ref=TASK, panel_id=PANEL, options=options)
    assert len(result.appended) == 250
    progress = {k: seen[k] for k in ("state", "runs", "done")}
    assert progress == {"state": "running", "runs": 250, "done": 200}
    with ctx.db.read() as s:
        batch = s.get(RescoreBatch, "rs_watch")
        assert batch is not None
        assert batch.summary["state"] == "done" and batch.summary["done"] == 250
