"""``regua rescore``: re-judge stored runs with another panel or rubric, and compare evaluations.

``regua rescore --task REF [--runs ID …] --panel PANEL [--rubric REF]`` appends one evaluation per
run from the stored frames and masks (nothing is rendered unless the render profile changed; the
command says so). ``regua rescore --compare A B`` prints, per criterion, how many verdicts moved
between two sets of evaluations (batch ids, ``previous:<batch>``, panel ids or evaluation ids).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from regua.errors import ReguaError


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def diff_lines(diff: dict[str, Any], max_runs: int = 20) -> list[str]:
    """Human-readable lines of a diff (``service.scoring.diff.diff_evaluations``)."""
    lines = [
        f"{diff['a']} -> {diff['b']}: {diff['runs_compared']} runs compared "
        f"({diff['only_in_a']} only in a, {diff['only_in_b']} only in b)"
    ]
    for criterion, e in diff["criteria"].items():
        moves = ", ".join(f"{k} {v}" for k, v in e["transitions"].items()) or "none"
        lines.append(f"  {criterion}: {e['moved']}/{e['compared']} moved ({moves})")
        if e["runs"]:
            shown = ", ".join(e["runs"][:max_runs])
            more = len(e["runs"]) - max_runs
            lines.append(f"    runs: {shown}" + (f" … (+{more})" if more > 0 else ""))
    o = diff["outcome"]
    moves = ", ".join(f"{k} {v}" for k, v in o["transitions"].items()) or "none"
    lines.append(f"  outcome: {o['moved']}/{diff['runs_compared']} moved ({moves})")
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
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Re-score stored runs with a new judge panel (append-only), or compare two evaluations."""
    from regua.settings import Settings
    from service.artifacts import LocalBlobStore
    from service.db import Database
    from service.scoring.diff import diff_evaluations
    from service.scoring.rescore import rescore

    settings = Settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    db = Database(settings.resolved_database_url())
    renderer: Any = None
    try:
        if compare:
            with db.read() as s:
                diff = diff_evaluations(s, compare[0], compare[1], task)
            lines = [json.dumps(diff, sort_keys=True)] if as_json else diff_lines(diff)
            for line in lines:
                typer.echo(line)
            return
        if not task or not panel:
            raise _fail("give --task and --panel (or --compare A B)")
        from service.adapters import RenderingAdapter
        from tasks import bundled_registry

        renderer = RenderingAdapter(settings)  # its pool starts only if a re-render is needed
        result = rescore(
            db,
            LocalBlobStore(settings.resolved_artifact_dir()),
            task_ref=task,
            panel_id=panel,
            run_ids=runs or None,
            rubric=bundled_registry().get(rubric) if rubric else None,
            renderer=renderer,
            settings=settings,
        )
    except ReguaError as exc:
        raise _fail(str(exc)) from exc
    finally:
        if renderer is not None:
            renderer.close()
        db.dispose()
    data = result.to_dict()
    if as_json:
        typer.echo(json.dumps(data, sort_keys=True))
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
