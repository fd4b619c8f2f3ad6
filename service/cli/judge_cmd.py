"""``regua judge FILE --task ID@VERSION --profile PROFILE [--json]`` and ``regua judge --list``.

Runs extraction, the static checks, the sandboxed render and ONE judge profile locally — no
service, no calibration gate, no jury — and prints each criterion's raw verdict with its
evidence. Exit codes: 0 when the judge answered, 1 when it recorded a judge error on some
criterion, 2 for a usage error (unknown task or profile, unreadable file).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

import judges
from regua.errors import NotFoundError, UnknownTaskError
from regua.settings import Settings, load_settings
from sandbox import WorkerPool
from service.cli.task_ref import TaskDataDir, resolve_task
from service.pipeline.local import evidence_of
from service.pipeline.render_client import RenderClient
from tasks import TaskSpec


def _list_profiles() -> None:
    typer.echo("judge kinds: " + ", ".join(judges.registry().kinds()))
    typer.echo("profiles:")
    for p in judges.list_profiles():
        model = f" model={p.model}" if p.model else ""
        typer.echo(f"  {p.id:<26} kind={p.kind}{model} hash={p.content_hash()[:12]}")
        if p.description:
            typer.echo(f"      {p.description}")
    typer.echo("panels:")
    for panel in judges.list_panels():
        typer.echo(f"  {panel.id:<26} family={panel.family} hash={panel.content_hash()[:12]}")
        for criterion, ids in sorted(panel.to_dict()["assignments"].items()):
            typer.echo(f"      {criterion}: {', '.join(ids)}")


def run_judge(
    raw: bytes | str,
    task: TaskSpec,
    profile_id: str,
    settings: Settings,
    *,
    render: bool = True,
    pool: WorkerPool | None = None,
) -> tuple[list[judges.Verdict], list[judges.JudgeFailure], list[str]]:
    """Checks, render and one judge on every applicable criterion it answers.

    ``pool`` is an existing ``sandbox.WorkerPool`` to render with (default: a one-worker pool
    of this command's own). Returns (verdicts, judge failures, notes). Raises NotFoundError for
    an unknown profile.
    """
    profile = judges.get_profile(profile_id)
    one = settings.model_copy(update={"render_workers": 1})
    renderer = RenderClient(one, pool) if render else None
    try:
        evidence = evidence_of(raw, task, renderer)
    finally:
        if renderer is not None:
            renderer.close()
    panel = judges.JudgePanel(profile.id, task.family, {"*": (profile.id,)})
    answers = judges.ask_judges(evidence.inp, panel, judges.seat_panel(panel, settings))
    return list(answers.verdicts), list(answers.failures), evidence.notes


def judge_command(
    file: Path | None = typer.Argument(None, help="Raw model reply or SVG file"),
    task_ref: str | None = typer.Option(None, "--task", help="Task reference ID@VERSION"),
    profile: str | None = typer.Option(None, "--profile", help="Judge profile id, e.g. geometry@1"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON {verdicts, failures}"),
    list_: bool = typer.Option(False, "--list", help="List judge kinds, profiles and panels"),
    render: bool = typer.Option(True, "--render/--no-render", help="Render in the sandbox"),
    data_dir: Path | None = TaskDataDir,
) -> None:
    """Run one judge profile on FILE (no service, no gate) and print its raw verdicts."""
    if list_:
        _list_profiles()
        return
    if file is None or task_ref is None or profile is None:
        typer.echo("error: give FILE, --task and --profile (or --list)", err=True)
        raise typer.Exit(2)
    from service.cli.check_cmd import InputProblem, read_input

    try:
        task = resolve_task(task_ref, data_dir)
    except UnknownTaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    raw = read_input(file)
    if isinstance(raw, InputProblem):
        typer.echo(f"error: {raw.file}: {raw.message}", err=True)
        raise typer.Exit(2)
    try:
        verdicts, failures, notes = run_judge(raw, task, profile, load_settings(), render=render)
    except NotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        doc = {
            "task_ref": task.ref,
            "judge_profile_id": profile,
            "verdicts": [v.to_dict() for v in verdicts],
            "failures": [f.to_dict() for f in failures],
            "notes": notes,
        }
        typer.echo(json.dumps(doc, indent=2))
    else:
        for note in notes:
            typer.echo(f"# {note}")
        for v in verdicts:
            ev = v.evidence
            where = ev.artifact_ref or "-"
            if ev.time_s is not None:
                where += f" @ {ev.time_s:g}s"
            typer.echo(f"{v.criterion:<3} {v.status.value:<14} {ev.description}  [{where}]")
        for f in failures:
            typer.echo(f"{f.criterion:<3} {'judge error':<14} {f.cause}: {f.detail}")
        if not verdicts and not failures:
            typer.echo(f"{profile} answers no criterion of {task.ref}")
    if failures:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``regua judge`` to the main app."""
    app.command("judge")(judge_command)
