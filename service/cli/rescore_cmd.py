"""``regua rescore``: re-judge stored runs with another panel or rubric, and compare evaluations.

``regua rescore --task REF [--runs ID …] --panel PANEL [--rubric REF]`` appends one evaluation per
run from the stored frames and masks (nothing is rendered unless the render profile changed; the
command says so). ``regua rescore --compare A B`` prints, per criterion, how many verdicts moved
between two sets of evaluations (batch ids, ``previous:<batch>``, panel ids or evaluation ids).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from regua.errors import InputError
from regua.settings import load_settings
from service.cli.options import AsJson
from service.evaluation.diff import EvaluationDiff
from service.evaluation.rescore import RescoreResult
from service.tasks_store.configured import with_data_dir


def diff_lines(diff: EvaluationDiff, max_runs: int = 20) -> list[str]:
    """Human-readable lines of a diff (``service.evaluation.diff.diff_evaluations``)."""
    lines = [
        f"{diff.a} -> {diff.b}: {diff.runs_compared} runs compared "
        f"({diff.only_in_a} only in a, {diff.only_in_b} only in b)"
    ]
    for criterion, e in diff.criteria.items():
        moves = ", ".join(f"{k} {v}" for k, v in e.transitions.items()) or "none"
        lines.append(f"  {criterion}: {e.moved}/{e.compared} moved ({moves})")
        if e.runs:
            shown = ", ".join(e.runs[:max_runs])
            more = len(e.runs) - max_runs
            lines.append(f"    runs: {shown}" + (f" … (+{more})" if more > 0 else ""))
    o = diff.outcome
    moves = ", ".join(f"{k} {v}" for k, v in o.transitions.items()) or "none"
    lines.append(f"  outcome: {o.moved}/{diff.runs_compared} moved ({moves})")
    return lines


def rescore_command(
    task: str = typer.Option(None, "--task", help="Task ID@VERSION (or bare ID: every version)"),
    panel: str = typer.Option(None, "--panel", help="Judge panel id (NAME@VERSION)"),
    runs: list[str] = typer.Option(None, "--runs", help="Only these run ids (repeatable)"),
    rubric: str = typer.Option(None, "--rubric", help="Judge under this task version instead"),
    compare: tuple[str, str] | None = typer.Option(
        None, "--compare", help="Diff two evaluation sets A B instead of re-scoring"
    ),
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
    as_json: bool = AsJson,
) -> None:
    """Re-score stored runs with a new judge panel (append-only), or compare two evaluations."""
    from service.context import ServiceContext
    from service.evaluation.diff import diff_evaluations
    from service.evaluation.rescore import RescoreOptions, rescore
    from service.pipeline.rerender import rerenderer

    settings = with_data_dir(load_settings(), data_dir)
    ctx = ServiceContext.open(settings)  # its render pool starts only if a re-render is needed
    try:
        if compare:
            with ctx.db.read() as s:
                diff = diff_evaluations(s, compare[0], compare[1], task)
            lines = [diff.model_dump_json()] if as_json else diff_lines(diff)
            for line in lines:
                typer.echo(line)
            return
        if not task or not panel:
            raise InputError("give --task and --panel (or --compare A B)")
        result = rescore(
            ctx.db,
            ctx.blobs,
            task_ref=task,
            panel_id=panel,
            run_ids=runs or None,
            rubric=ctx.registry.get(rubric) if rubric else None,
            rerender=rerenderer(ctx.db, ctx.blobs, ctx.machinery),
            evaluator=ctx.evaluator,
            options=RescoreOptions(settings),
        )
    finally:
        ctx.close()
    _print_result(result, as_json)


def _print_result(result: RescoreResult, as_json: bool) -> None:
    """What a batch did: JSON, or lines saying what was appended, rendered and skipped."""
    if as_json:
        summary = result.summary(result.done).model_dump(mode="json")
        typer.echo(json.dumps({"batch_id": result.batch_id, **summary}, sort_keys=True))
        return
    typer.echo(
        f"batch {result.batch_id}: {len(result.appended)} evaluations appended with "
        f"{result.panel_id} in {result.elapsed_s:.1f} s "
        f"({result.judged} judged, {result.memo_hits} identical inputs reused)"
    )
    if result.rerendered:
        typer.echo(f"re-rendered {len(result.rerendered)} runs: the render profile changed")
    else:
        typer.echo("rendered nothing: judged from the stored frames and masks")
    for run_id, why in result.skipped.items():
        typer.echo(f"skipped {run_id}: {why}", err=True)
    typer.echo(f"compare: regua rescore --compare previous:{result.batch_id} {result.batch_id}")


def register(app: typer.Typer) -> None:
    """Add ``regua rescore``."""
    app.command("rescore")(rescore_command)
