"""Stages 3 and 4: evaluate (the panel, the jury and the outcome) and finalize (mark done)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

import judges
from service.evaluation.inputs import StoredRun, checker_version, load_eval_inputs
from service.evaluation.record import (
    RECORD_KEY,
    EvaluationVersions,
    NewEvaluation,
    append_evaluation,
    memo_bytes,
)
from service.pipeline.runner import StageContext, Writer, Written
from service.storage import Run, StageRecord, utcnow
from service.storage.cached_blobs import put_many
from service.storage.details import EvaluateDetail, FinalizeDetail, read_detail


def evaluate_version(ctx: StageContext) -> str:
    """The evaluate stage changes with the panel (id and content) used for the run."""
    return ctx.machinery.evaluator.version_for(ctx.task, ctx.requested_panel())


def evaluate_compute(ctx: StageContext) -> Writer:
    """Judge the run's stored evidence; the writer appends the first evaluation."""
    (stored,) = load_eval_inputs(ctx.db, ctx.blobs, {ctx.run_id: ctx.task}, [ctx.run_id])
    new = _new(stored, ctx.machinery.evaluator.judge(stored))
    put_many(ctx.blobs, _blobs(new))  # bytes first, all at once, outside the transaction

    def write(s: Session) -> Written:
        ev = append_evaluation(s, ctx.blobs, new)
        return "done", EvaluateDetail(evaluation_id=ev.id, outcome=ev.outcome)

    return write


def _blobs(new: NewEvaluation) -> list[bytes]:
    """The bytes the evaluation's writer stores.

    Raw judge replies, adjudication prompts and replies, the grown memo.
    """
    texts: list[str | None] = [
        v.raw_reply
        for v in new.result.verdicts
        if v.raw_reply is not None and not isinstance(v.details.get(RECORD_KEY), str)
    ]
    for adj in new.result.adjudications:
        verdict, failure = adj.verdict, adj.failure
        raw = verdict.raw_reply if verdict is not None else (failure.raw_reply if failure else None)
        texts += [adj.prompt, raw]
    datas = [text.encode("utf-8") for text in texts if text is not None]
    if new.measurements is not None and new.measurements.added:
        datas.append(memo_bytes(new.measurements))
    return datas


def _new(stored: StoredRun, result: judges.PanelResult) -> NewEvaluation:
    return NewEvaluation(
        run_id=stored.run_id,
        kind="initial",
        result=result,
        versions=stored.versions,
        artifact_names=stored.artifact_names,
        measurements=stored.inp.measurements,
    )


def finalize_compute(ctx: StageContext) -> Writer:
    """Mark the run done (and run the machinery's ``on_done`` hooks in the same transaction).

    A run no evaluation could be written for (its evaluate stage gave up) gets an
    ``incomplete`` evaluation with the cause, through the same writer.
    """

    def write(s: Session) -> Written:
        run = s.get(Run, ctx.run_id)
        assert run is not None
        if run.current_evaluation_id is None:
            append_evaluation(s, ctx.blobs, _unevaluated(s, ctx))
        run.status = "done"
        run.finished_at = utcnow()
        run.lease_owner = None
        run.lease_expires_at = None
        s.flush()
        for hook in ctx.machinery.on_done:  # e.g. the run's review items, in this transaction
            hook(s, ctx.run_id)
        return "done", FinalizeDetail(outcome=run.outcome)

    return write


def _unevaluated(s: Session, ctx: StageContext) -> NewEvaluation:
    """An evaluation of a run nobody could judge.

    It is the jury's decision on no answers: ``incomplete``, with the cause of the stage that
    gave up.
    """
    records = s.scalars(
        select(StageRecord).where(StageRecord.run_id == ctx.run_id).order_by(StageRecord.id)
    ).all()
    broken = next((r for r in records if r.status == "incomplete"), None)
    cause = (read_detail(broken, EvaluateDetail).cause if broken else None) or "no_evaluation"
    inp = judges.EvalInput(ctx.task, None, machinery_error=cause)
    asked = s.scalar(select(Run.panel_id).where(Run.id == ctx.run_id))
    panel = ctx.machinery.evaluator.panel_for(ctx.task, asked)
    result = judges.evaluate(inp, panel, None, answers=judges.JudgeAnswers(), seated={})
    check = next((r for r in records if r.stage == "check"), None)
    versions = EvaluationVersions(
        ctx.task.ref, ctx.task.content_hash(), checker_version(check), None, None
    )
    return NewEvaluation(ctx.run_id, "initial", result, versions)
