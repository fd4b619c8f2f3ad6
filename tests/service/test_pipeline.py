"""The pipeline with fake machinery, on SQLite and PostgreSQL: outcomes by rule, machinery failures
as incomplete, idempotent stages, append-only evaluations, exclusive claims."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import func, select

from service.components import Components
from service.context import ServiceContext
from service.db import Artifact, Evaluation, RenderRecord, Run, StageAttempt, StageRecord
from service.executor import Executor, release_dead_local_leases
from service.pipeline import advance
from service.stages import STAGES
from service.static_jury import StaticJury
from service.submission import Submission, submit
from tests.service.fakes import FakeChecker, FakeRenderer

TASK = "pelican-bicycle-structured@1"
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "outputs"
GOOD = (SAMPLES / "structured-good.svg").read_text()


def _submit(ctx: ServiceContext, *outputs: str) -> list[str]:
    return submit(ctx, [Submission(TASK, "model-x", o) for o in outputs], None)


def _drain(ctx: ServiceContext, components: Components) -> Executor:
    ex = Executor(ctx.db, ctx.blobs, components, threads=1)
    while ex.run_once():
        pass
    return ex


def _run(ctx: ServiceContext, run_id: str) -> Run:
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        return run


def test_outcomes_follow_the_rules(ctx: ServiceContext) -> None:
    renderer = FakeRenderer()
    comps = Components(FakeChecker(), renderer, StaticJury())
    good, script, nosvg = _submit(
        ctx, "Sure:\n" + GOOD, GOOD.replace("<title>", "<script>x()</script><title>"), "no."
    )
    _drain(ctx, comps)
    assert (_run(ctx, good).status, _run(ctx, good).outcome) == ("done", "pending")
    assert _run(ctx, script).outcome == "fail"  # declared rule, decided by the checks
    assert _run(ctx, nosvg).outcome == "fail"
    assert renderer.calls == 2  # no SVG → nothing to render
    with ctx.db.read() as s:
        skipped = s.scalar(
            select(StageRecord).where(StageRecord.run_id == nosvg, StageRecord.stage == "render")
        )
        assert skipped is not None and skipped.status == "skipped"
        kinds = set(s.scalars(select(Artifact.kind).where(Artifact.run_id == good)))
        assert {"raw", "extracted", "check_report", "render_log", "frame", "mask"} <= kinds
        ev = s.scalar(select(Evaluation).where(Evaluation.run_id == good))
        assert ev is not None and ev.checker_version == "fake-checks@1"
        assert ev.render_profile_id == "svg-800x600-dpr1@1" and ev.judge_panel["id"]


def test_machinery_failure_is_incomplete_never_fail(ctx: ServiceContext) -> None:
    comps = Components(FakeChecker(), FakeRenderer(fail=True), StaticJury())
    ok_work, bad_work = _submit(ctx, GOOD, GOOD.replace("<title>", "<script>x()</script><title>"))
    _drain(ctx, comps)
    run = _run(ctx, ok_work)
    assert run.outcome == "incomplete" and run.outcome_cause == "render_incomplete: crash"
    assert _run(ctx, bad_work).outcome == "fail"  # broke a declared rule: fail regardless
    with ctx.db.read() as s:
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == ok_work))
        assert rec is not None and (rec.status, rec.cause, rec.attempts) == (
            "incomplete",
            "crash",
            3,
        )


class _Flaky(FakeRenderer):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def render(self, svg_text, task):
        if self.failures > 0:
            self.failures -= 1
            raise RuntimeError("pool exploded")
        return super().render(svg_text, task)


def test_stage_errors_are_retried_then_recorded_incomplete(ctx: ServiceContext) -> None:
    (retried,) = _submit(ctx, GOOD)
    _drain(ctx, Components(FakeChecker(), _Flaky(1), StaticJury()))
    assert _run(ctx, retried).outcome == "pending"
    (given_up,) = _submit(ctx, GOOD + " ")
    _drain(ctx, Components(FakeChecker(), _Flaky(99), StaticJury()))
    run = _run(ctx, given_up)
    assert run.status == "done" and run.outcome == "incomplete"
    assert run.outcome_cause == "render_incomplete: render_error"
    with ctx.db.read() as s:
        n = s.scalar(select(func.count()).where(StageAttempt.run_id == given_up))
        assert n == 3


def test_stages_are_idempotent_and_evaluations_append_only(ctx: ServiceContext) -> None:
    renderer = FakeRenderer()
    comps = Components(FakeChecker(), renderer, StaticJury())
    (run_id,) = _submit(ctx, GOOD)
    _drain(ctx, comps)
    with ctx.db.read() as s:
        before = s.scalar(select(func.count()).where(Artifact.run_id == run_id))
    # replay every stage: nothing re-runs, nothing duplicates
    with ctx.db.write() as s:
        run = s.get(Run, run_id)
        assert run is not None
        run.status = "running"
    assert advance(ctx.db, ctx.blobs, comps, run_id, STAGES)
    with ctx.db.read() as s:
        assert s.scalar(select(func.count()).where(Artifact.run_id == run_id)) == before
        assert s.scalar(select(func.count()).where(Evaluation.run_id == run_id)) == 1
    assert renderer.calls == 1

    # a new panel version is a new evaluation that supersedes the old one
    class Panel2(StaticJury):
        panel_id = "static-only@2"

    with ctx.db.write() as s:
        run = s.get(Run, run_id)
        assert run is not None
        run.status = "running"
    assert advance(ctx.db, ctx.blobs, Components(FakeChecker(), renderer, Panel2()), run_id, STAGES)
    with ctx.db.read() as s:
        evs = s.scalars(
            select(Evaluation).where(Evaluation.run_id == run_id).order_by(Evaluation.id)
        ).all()
        assert [e.judge_panel["id"] for e in evs] == ["static-only@1", "static-only@2"]
        assert evs[1].supersedes_id == evs[0].id
        assert _run(ctx, run_id).current_evaluation_id == evs[1].id
    assert renderer.calls == 1  # re-judging renders nothing


def test_concurrent_executors_claim_each_run_once(ctx: ServiceContext) -> None:
    renderer = FakeRenderer(delay_s=0.01)
    comps = Components(FakeChecker(), renderer, StaticJury())
    ids = _submit(ctx, *[GOOD + " " * i for i in range(30)])
    executors = [Executor(ctx.db, ctx.blobs, comps, threads=1) for _ in range(3)]

    def drain(ex: Executor) -> None:
        while ex.run_once():
            pass

    threads = [threading.Thread(target=drain, args=(ex,)) for ex in executors]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert renderer.calls == 30
    with ctx.db.read() as s:
        assert s.scalar(select(func.count()).where(Run.status == "done")) == 30
        assert s.scalar(select(func.count(Evaluation.id))) == 30
        assert set(s.scalars(select(Run.id))) == set(ids)


def test_dead_local_leases_are_released(ctx: ServiceContext) -> None:
    (run_id,) = _submit(ctx, GOOD)
    ex = Executor(ctx.db, ctx.blobs, Components(FakeChecker(), FakeRenderer(), StaticJury()))
    assert ex.claim() == run_id
    with ctx.db.write() as s:  # pretend a process that no longer exists holds it
        run = s.get(Run, run_id)
        assert run is not None
        run.lease_owner = ex.owner.split(":")[0] + ":999999999:dead"
    assert ex.claim() is None  # the lease is still valid
    assert release_dead_local_leases(ctx.db) == 1
    assert ex.claim() == run_id
