"""A stage job goes on with the next stage itself unless the kind of work changes (issue 28.4).

Real PostgreSQL queue, real sandboxed rendering, a real HTTP server imitating the vision model:
a static run on a deterministic panel is checked, rendered, judged and finalized by its one
check job (no other job is deferred, so no other worker reads its blobs back); a run whose
panel asks a model has its evaluation deferred to the judge queue, whose job also finalizes it;
a job cut off after its first record goes on from there when delivered again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from regua.llm.testing import FrameTruth, serving
from regua.settings import Settings
from service.context import ServiceContext
from service.pipeline.pgworker import StageJobs
from service.pipeline.runner import MAX_STAGE_ATTEMPTS, StageContext, run_stage
from service.pipeline.stages import RENDER_STAGE, STAGES
from service.pipeline.submit import Submission
from service.storage import Run, StageAttempt, StageRecord
from service.storage.s3_blobs import S3BlobStore
from tests.helpers.pg import fresh_pg_database
from tests.helpers.runs import TASK
from tests.helpers.s3 import S3Server
from tests.service.conftest import GOOD

pytestmark = [pytest.mark.postgres, pytest.mark.browser, pytest.mark.sandbox]
VISION_PANEL = "pelican-bicycle-vision@1"


def _open(tmp_path: Path, url: str, **extra: object) -> ServiceContext:
    settings = Settings.model_validate(
        {"data_dir": tmp_path / "data", "database_url": url, "render_workers": 1, **extra}
    )
    return ServiceContext.open(settings)


@pytest.fixture
def pg_url() -> Iterator[str]:
    yield from fresh_pg_database("regua_chain")


def _jobs(ctx: ServiceContext, run_id: str) -> list[tuple[str, str, str]]:
    """(stage, queue, status) of the run's stage jobs, in the order they were deferred."""
    with ctx.db.read() as s:
        rows = s.execute(
            text(
                "SELECT args->>'stage', queue_name, status::text FROM procrastinate_jobs "
                "WHERE args->>'run_id' = :r ORDER BY id"
            ),
            {"r": run_id},
        ).all()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def _records(ctx: ServiceContext, run_id: str) -> dict[str, int]:
    with ctx.db.read() as s:
        rows = s.execute(
            select(StageRecord.stage, func.count(StageRecord.id))
            .where(StageRecord.run_id == run_id)
            .group_by(StageRecord.stage)
        ).all()
    return {str(stage): int(n) for stage, n in rows}


def _status(ctx: ServiceContext, run_id: str) -> str | None:
    with ctx.db.read() as s:
        return s.scalar(select(Run.status).where(Run.id == run_id))


EVERY_STAGE = {st.name: 1 for st in STAGES}


def test_a_static_run_is_finished_by_its_check_job_alone(tmp_path: Path, pg_url: str) -> None:
    ctx = _open(tmp_path, pg_url)
    try:
        (run_id,) = ctx.submit([Submission(TASK, "m", GOOD)], None)
        jobs = StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings)
        jobs.run(run_id, "check")
        assert _status(ctx, run_id) == "done"
        assert _records(ctx, run_id) == EVERY_STAGE
        assert _jobs(ctx, run_id) == [("check", "render", "todo")]  # nothing else deferred
        # render and evaluate read what the stages before them just wrote from memory: only
        # the raw reply (written by the process that took the submission) came from the store
        assert jobs.written.hits >= 20
        assert jobs.written.misses == 1
        jobs.run(run_id, "check", delivery=2)  # delivered again: the run is done, a no-op
        assert _records(ctx, run_id) == EVERY_STAGE
    finally:
        ctx.close()


def test_a_job_cut_off_after_its_record_goes_on_when_delivered_again(
    tmp_path: Path, pg_url: str
) -> None:
    ctx = _open(tmp_path, pg_url)
    try:
        (run_id,) = ctx.submit([Submission(TASK, "m", GOOD)], None)
        task = ctx.registry.get(TASK)
        # the check is recorded, then the worker dies before going on (nothing deferred)
        cut = replace(ctx.machinery, on_recorded=())
        assert run_stage(StageContext(ctx.db, ctx.blobs, cut, run_id, task), STAGES[0])
        assert _records(ctx, run_id) == {"check": 1}
        jobs = StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings)
        jobs.run(run_id, "check", delivery=2)
        assert _records(ctx, run_id) == EVERY_STAGE
        assert _status(ctx, run_id) == "done"
    finally:
        ctx.close()


def test_a_chained_job_opens_one_write_transaction_per_record_and_one_to_start(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage a job goes on with is looked up in the transaction recording the one before."""
    ctx = _open(tmp_path, pg_url)
    try:
        (run_id,) = ctx.submit([Submission(TASK, "m", GOOD)], None)
        jobs = StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings)
        opened: Counter[str] = Counter()
        for kind in ("read", "write"):
            original = getattr(ctx.db, kind)

            def counted(kind: str = kind, original: Callable[[], object] = original) -> object:
                opened[kind] += 1
                return original()

            monkeypatch.setattr(ctx.db, kind, counted)
        jobs.run(run_id, "check")
        assert _records(ctx, run_id) == EVERY_STAGE and _status(ctx, run_id) == "done"
        assert opened["write"] == 1 + len(STAGES), opened  # start (running), then each record
        # the check reads the raw reply's row with the leak watch list, the render the check's
        # record with the extracted SVG's row, each in one session (10 when in two each)
        assert opened["read"] == 8, opened
    finally:
        ctx.close()


def test_a_stage_looked_up_ahead_keeps_its_failed_attempts(tmp_path: Path, pg_url: str) -> None:
    ctx = _open(tmp_path, pg_url)
    try:
        (run_id,) = ctx.submit([Submission(TASK, "m", GOOD)], None)
        stage_ctx = StageContext(ctx.db, ctx.blobs, ctx.machinery, run_id, ctx.registry.get(TASK))
        version = RENDER_STAGE.version(stage_ctx)
        with ctx.db.write() as s:
            for _ in range(MAX_STAGE_ATTEMPTS):
                s.add(StageAttempt(run_id=run_id, stage="render", version=version, error="boom"))
        StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings).run(run_id, "check")
        with ctx.db.read() as s:
            render = s.scalars(
                select(StageRecord).where(
                    StageRecord.run_id == run_id, StageRecord.stage == "render"
                )
            ).one()
        assert (
            render.status == "incomplete" and (render.detail or {}).get("cause") == "render_error"
        )
        assert _status(ctx, run_id) == "done"
    finally:
        ctx.close()


def test_a_panel_that_asks_a_model_gets_its_evaluation_deferred_to_the_judge_queue(
    tmp_path: Path, pg_url: str
) -> None:
    with serving(FrameTruth(default="pass")) as model:
        ctx = _open(
            tmp_path,
            pg_url,
            judge_base_url=model.url,
            judge_model="fake-vision",
            judge_api_key="test",
        )
        try:
            (run_id,) = ctx.submit([Submission(TASK, "m", GOOD, panel=VISION_PANEL)], None)
            jobs = StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings)
            jobs.run(run_id, "check")
            assert _records(ctx, run_id) == {"check": 1, "render": 1}
            assert _jobs(ctx, run_id) == [
                ("check", "render", "todo"),
                ("evaluate", "judge", "todo"),
            ]
            jobs.run(run_id, "evaluate")  # the judge queue's job also finalizes the run
            assert _records(ctx, run_id) == EVERY_STAGE
            assert _status(ctx, run_id) == "done"
            assert len(_jobs(ctx, run_id)) == 2
        finally:
            ctx.close()


def test_a_run_on_the_queue_reads_one_blob_back_from_s3_and_writes_each_once(
    tmp_path: Path, pg_url: str, s3_server: S3Server, s3_bucket: str
) -> None:
    settings = s3_server.settings(tmp_path / "data", s3_bucket)
    ctx = ServiceContext.open(
        settings.model_copy(update={"database_url": pg_url, "render_workers": 1})
    )
    try:
        assert isinstance(ctx.blobs, S3BlobStore)
        calls: list[str] = []

        def called(**call: object) -> None:
            calls.append(str(getattr(call.get("model"), "name", "")))

        ctx.blobs.client.meta.events.register("before-call.s3", called)
        jobs = StageJobs(ctx.db, ctx.blobs, ctx.machinery, ctx.settings)
        for i in range(2):  # the second run's frames and masks are the first one's bytes
            calls.clear()
            (run_id,) = ctx.submit([Submission(TASK, "m", f"{GOOD}<!-- {i} -->")], None)
            jobs.run(run_id, "check")
            assert _status(ctx, run_id) == "done"
            ops = Counter(calls)
            # the raw reply is the one blob the worker did not write itself
            assert ops["GetObject"] == 1, ops
            # every new blob (the raw reply too) is one conditional write, no look first
            assert ops["HeadObject"] == 0, ops
            if i == 1:
                assert ops["PutObject"] <= 4, ops  # raw reply, SVG, render log, check report
    finally:
        ctx.close()
