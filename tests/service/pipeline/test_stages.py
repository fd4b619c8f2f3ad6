"""The pipeline with the real checker, sandboxed renderer and judges, on SQLite and PostgreSQL:
outcomes by rule, machinery failures as incomplete, idempotent stages, append-only evaluations,
exclusive claims."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from sandbox import WorkerPool
from service.context import ServiceContext
from service.pipeline.check_stage import CHECKER_VERSION
from service.pipeline.executor import Executor, release_dead_local_leases
from service.pipeline.render_client import RenderClient
from service.pipeline.runner import Machinery, advance
from service.pipeline.stages import STAGES
from service.pipeline.submit import Submission
from service.storage import Artifact, Evaluation, RenderRecord, Run, StageAttempt, StageRecord
from tests.helpers.runs import STRICT_PANEL, CountingRenderer, machinery, register_strict

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

TASK = "pelican-bicycle-structured@1"
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "outputs"
GOOD = (SAMPLES / "structured-good.svg").read_text()
SCRIPT = GOOD.replace("<title>", "<script>x()</script><title>")


def _submit(ctx: ServiceContext, *outputs: str) -> list[str]:
    return ctx.submit([Submission(TASK, "model-x", o) for o in outputs], None)


def _drain(ctx: ServiceContext, machine: Machinery) -> Executor:
    ex = Executor(ctx.db, ctx.blobs, machine, threads=1)
    while ex.run_once():
        pass
    return ex


def _run(ctx: ServiceContext, run_id: str) -> Run:
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None
        return run


def test_outcomes_follow_the_rules(ctx: ServiceContext, render_pool: WorkerPool) -> None:
    renderer = CountingRenderer(ctx.settings, render_pool)
    good, script, nosvg = _submit(ctx, "Sure:\n" + GOOD, SCRIPT, "no.")
    _drain(ctx, machinery(ctx, renderer))
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
        assert ev is not None and ev.checker_version == CHECKER_VERSION
        assert ev.render_profile_id == "svg-800x600-dpr1@1" and ev.judge_panel["id"]


def test_a_render_past_its_budget_fails_by_rule_never_incomplete(
    ctx: ServiceContext, render_pool: WorkerPool
) -> None:
    """A render over its CPU budget (here: 10 ms of CPU time, which no render meets) is the
    drawing's cost, not the machinery's: it fails by the declared rule "exceeds the render
    budget". The budget is CPU time, so the verdict is the same however busy the machine is."""
    hasty = CountingRenderer(ctx.settings, render_pool, cpu_budget_s=0.01)
    ok_work, bad_work = _submit(ctx, GOOD, SCRIPT)
    _drain(ctx, machinery(ctx, hasty))
    run = _run(ctx, ok_work)
    assert run.outcome == "fail" and run.outcome_cause is None
    assert _run(ctx, bad_work).outcome == "fail"  # broke a declared rule: fail regardless
    with ctx.db.read() as s:
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == ok_work))
        assert rec is not None and (rec.status, rec.cause) == ("over_budget", "cpu_budget")
        assert rec.attempts == 1  # a render over its CPU budget is not retried (it would again)
        assert rec.cpu_ms is not None and rec.cpu_ms >= 10.0
        ev = s.scalar(select(Evaluation).where(Evaluation.run_id == ok_work))
        assert ev is not None and "exceeds the render budget" in ev.reasons


def test_a_render_the_wall_clock_stops_is_retried_once_then_incomplete(
    ctx: ServiceContext, render_pool: WorkerPool
) -> None:
    """A render stopped by the wall-clock safety stop (here: 10 ms) with its CPU time under the
    budget says the machine was busy, nothing about the drawing: it is retried once on a fresh
    worker at lower concurrency and, stopped again, the run is ``incomplete`` with the cause —
    never a fail of the work. What the submitter reads says why."""
    hasty = CountingRenderer(ctx.settings, render_pool, timeout_s=0.01)
    (ok_work,) = _submit(ctx, GOOD)
    _drain(ctx, machinery(ctx, hasty))
    run = _run(ctx, ok_work)
    assert (run.outcome, run.outcome_cause) == ("incomplete", "render_incomplete: wall_stop")
    with ctx.db.read() as s:
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == ok_work))
        assert rec is not None and (rec.status, rec.cause) == ("incomplete", "wall_stop")
        assert rec.attempts == 2  # the first stop was retried once
        assert rec.detail is not None and "not a verdict on the drawing" in rec.detail


def test_stage_errors_are_retried_then_recorded_incomplete(
    ctx: ServiceContext, render_pool: WorkerPool, tmp_path: Path
) -> None:
    """A render client whose sandbox cannot start raises; the stage is retried on the next
    claim and, after three failed attempts, recorded incomplete with the error as cause."""
    broken = RenderClient(ctx.settings.model_copy(update={"chromium_path": tmp_path / "none"}))
    (retried,) = _submit(ctx, GOOD)
    Executor(ctx.db, ctx.blobs, machinery(ctx, broken), threads=1).run_once()
    _drain(ctx, machinery(ctx, RenderClient(ctx.settings, render_pool)))
    assert _run(ctx, retried).outcome == "pending"
    (given_up,) = _submit(ctx, GOOD + " ")
    _drain(ctx, machinery(ctx, broken))
    run = _run(ctx, given_up)
    assert run.status == "done" and run.outcome == "incomplete"
    assert run.outcome_cause == "render_incomplete: render_error"
    with ctx.db.read() as s:
        n = s.scalar(select(func.count()).where(StageAttempt.run_id == given_up))
        assert n == 3
        (error,) = set(s.scalars(select(StageAttempt.error).where(StageAttempt.run_id == retried)))
        assert "SandboxError" in error


def test_stages_are_idempotent_and_evaluations_append_only(
    ctx: ServiceContext, render_pool: WorkerPool
) -> None:
    renderer = CountingRenderer(ctx.settings, render_pool)
    machine = machinery(ctx, renderer)
    (run_id,) = _submit(ctx, GOOD)
    _drain(ctx, machine)
    with ctx.db.read() as s:
        before = s.scalar(select(func.count()).where(Artifact.run_id == run_id))
    _reopen(ctx, run_id)  # replay every stage: nothing re-runs, nothing duplicates
    assert advance(ctx.db, ctx.blobs, machine, run_id, STAGES)
    with ctx.db.read() as s:
        assert s.scalar(select(func.count()).where(Artifact.run_id == run_id)) == before
        assert s.scalar(select(func.count()).where(Evaluation.run_id == run_id)) == 1
    assert renderer.calls == 1
    register_strict()  # another panel is a new evaluation that supersedes the old one
    _reopen(ctx, run_id)
    assert advance(ctx.db, ctx.blobs, machinery(ctx, renderer, STRICT_PANEL), run_id, STAGES)
    with ctx.db.read() as s:
        evs = s.scalars(
            select(Evaluation).where(Evaluation.run_id == run_id).order_by(Evaluation.id)
        ).all()
        assert [e.judge_panel["id"] for e in evs] == ["pelican-bicycle-default@1", STRICT_PANEL]
        assert evs[1].supersedes_id == evs[0].id
        assert _run(ctx, run_id).current_evaluation_id == evs[1].id
    assert renderer.calls == 1  # re-judging renders nothing


def _reopen(ctx: ServiceContext, run_id: str) -> None:
    with ctx.db.write() as s:
        run = s.get(Run, run_id)
        assert run is not None
        run.status = "running"


def test_concurrent_executors_claim_each_run_once(
    ctx: ServiceContext, render_pool: WorkerPool
) -> None:
    renderer = CountingRenderer(ctx.settings, render_pool)
    machine = machinery(ctx, renderer)
    ids = _submit(ctx, *[GOOD + " " * i for i in range(8)])  # the queue holds 8
    executors = [Executor(ctx.db, ctx.blobs, machine, threads=1) for _ in range(3)]

    def drain(ex: Executor) -> None:
        while ex.run_once():
            pass

    threads = [threading.Thread(target=drain, args=(ex,)) for ex in executors]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert renderer.calls == 8
    with ctx.db.read() as s:
        assert s.scalar(select(func.count()).where(Run.status == "done")) == 8
        assert s.scalar(select(func.count(Evaluation.id))) == 8
        assert set(s.scalars(select(Run.id))) == set(ids)


def test_dead_local_leases_are_released(ctx: ServiceContext) -> None:
    (run_id,) = _submit(ctx, GOOD)
    ex = Executor(ctx.db, ctx.blobs, ctx.machinery)
    assert ex.claim() == run_id
    with ctx.db.write() as s:  # pretend a process that no longer exists holds it
        run = s.get(Run, run_id)
        assert run is not None
        run.lease_owner = ex.owner.split(":")[0] + ":999999999:dead"
    assert ex.claim() is None  # the lease is still valid
    assert release_dead_local_leases(ctx.db) == 1
    assert ex.claim() == run_id
