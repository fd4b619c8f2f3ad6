"""Resource bombs and render budgets through the real pipeline (issue 14, items 7, 8 and 12).

- Work that fails a resource-limit check (``size``, ``render-cost``) is never rendered: its run
  fails by that declared rule at once, the render stage records "not rendered: resource limits",
  and no sandbox time is spent (the 2.4 KB ``<use>`` bomb used to cost 19-27 s and 2.4 GB).
- A drawing that passes the checks but whose render exceeds the budget fails F1 by the declared
  rule "exceeds the render budget"; ``incomplete`` stays for the machinery's own failures.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import select

from sandbox import WorkerPool
from service.context import ServiceContext
from service.pipeline.executor import Executor
from service.pipeline.render_client import create_pool
from service.pipeline.submit import Submission
from service.storage import CriterionOutcomeRow, Evaluation, RenderRecord, Run, StageRecord
from tests.checks.test_render_cost_bombs import mask_chain, selector_bomb
from tests.helpers.runs import CountingRenderer, machinery
from tests.render.test_bombs import use_chain
from tests.render.test_budget import slow_filter

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

TASK = "pelican-bicycle-structured@1"
SAMPLES = Path(__file__).resolve().parents[3] / "samples"
GOOD = (SAMPLES / "outputs" / "structured-good.svg").read_text()
SCRIPT = GOOD.replace("<title>", "<script>x()</script><title>")
BOMBS = {
    "use-bomb": (use_chain(levels=9, fan=10), "size", "element instances"),
    "depth-300": ((SAMPLES / "checks/fail/size--depth-300.svg").read_text(), "size", "depth 302"),
    "filter-bomb": ((SAMPLES / "checks/fail/render-cost.svg").read_text(), "render-cost", "filter"),
    "mask-chain": (mask_chain(), "render-cost", "layer-pixels > limit"),
    "selector-bomb": (selector_bomb(), "render-cost", "selector-steps > limit"),
}


def _drain(ctx: ServiceContext, renderer: CountingRenderer, *outputs: str) -> list[str]:
    ids = ctx.submit([Submission(TASK, "model-x", o) for o in outputs], None)
    ex = Executor(ctx.db, ctx.blobs, machinery(ctx, renderer), threads=1)
    while ex.run_once():
        pass
    return ids


@pytest.mark.parametrize("name", list(BOMBS))
def test_work_over_a_resource_limit_is_failed_and_never_rendered(
    ctx: ServiceContext, render_pool: WorkerPool, name: str
) -> None:
    svg, check_id, words = BOMBS[name]
    renderer = CountingRenderer(ctx.settings, render_pool)
    started = time.monotonic()
    (run_id,) = _drain(ctx, renderer, svg)
    assert time.monotonic() - started < 10  # no sandbox time: checks only
    assert renderer.calls == 0
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and (run.status, run.outcome) == ("done", "fail")
        ev = s.scalar(select(Evaluation).where(Evaluation.run_id == run_id))
        assert ev is not None and ev.reasons == ["F1: fail"]
        stage = s.scalar(
            select(StageRecord).where(StageRecord.run_id == run_id, StageRecord.stage == "render")
        )
        assert stage is not None and stage.status == "skipped" and stage.detail is not None
        assert stage.detail["reason"] == f"not rendered: resource limits ({check_id})"
        assert s.scalar(select(RenderRecord).where(RenderRecord.run_id == run_id)) is None
        f1 = s.scalar(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == ev.id, CriterionOutcomeRow.criterion == "F1"
            )
        )
        assert f1 is not None and f1.status == "fail"
    assert words in _failed_evidence(ctx, run_id, check_id)  # what the submitter reads


def _failed_evidence(ctx: ServiceContext, run_id: str, check_id: str) -> str:
    from service.storage import CheckResultRow

    with ctx.db.read() as s:
        row = s.scalar(
            select(CheckResultRow).where(
                CheckResultRow.run_id == run_id, CheckResultRow.check_id == check_id
            )
        )
        assert row is not None and row.status == "fail"
        return str(row.evidence)


def test_a_render_over_its_budget_fails_f1_by_the_declared_rule(
    ctx: ServiceContext, render_pool: WorkerPool
) -> None:
    renderer = CountingRenderer(ctx.settings, render_pool, cpu_budget_s=2.0)
    (run_id,) = _drain(ctx, renderer, slow_filter())
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.outcome == "fail" and run.outcome_cause is None
        ev = s.scalar(select(Evaluation).where(Evaluation.run_id == run_id))
        assert ev is not None and "exceeds the render budget" in ev.reasons
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == run_id))
        assert rec is not None and rec.status == "over_budget" and rec.attempts == 1
        assert rec.cause == "cpu_budget" and rec.cpu_ms is not None and rec.cpu_ms >= 2000
        assert rec.detail is not None and rec.detail.startswith("exceeds the render budget: ")
        stage = s.scalar(
            select(StageRecord).where(StageRecord.run_id == run_id, StageRecord.stage == "render")
        )
        assert stage is not None and stage.status == "done"  # a finished measurement
        f1 = s.scalar(
            select(CriterionOutcomeRow).where(
                CriterionOutcomeRow.evaluation_id == ev.id, CriterionOutcomeRow.criterion == "F1"
            )
        )
        assert f1 is not None and f1.status == "fail"


def test_a_sandbox_that_cannot_start_is_incomplete_never_fail(
    ctx: ServiceContext, tmp_path: Path
) -> None:
    """The machinery's failure (here: no worker can start its browser) stays ``incomplete`` with
    its cause; work that broke a declared rule still fails."""
    settings = ctx.settings.model_copy(update={"chromium_path": tmp_path / "no-chromium"})
    broken = create_pool(settings, size=1, warm=False)
    try:
        renderer = CountingRenderer(ctx.settings, broken)
        ok_work, bad_work = _drain(ctx, renderer, GOOD, SCRIPT)
    finally:
        broken.close()
    with ctx.db.read() as s:
        run = s.get(Run, ok_work)
        assert run is not None and run.outcome == "incomplete"
        assert run.outcome_cause == "render_incomplete: worker_refused"
        bad = s.get(Run, bad_work)
        assert bad is not None and bad.outcome == "fail"
        rec = s.scalar(select(RenderRecord).where(RenderRecord.run_id == ok_work))
        assert rec is not None and (rec.status, rec.cause) == ("incomplete", "worker_refused")
        assert rec.detail is not None and "--" not in rec.detail
