"""``regua render FILE --task ID@VERSION --out DIR [--json]``: one sandboxed render to a folder."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from regua.errors import ReguaError, UnknownTaskError
from regua.settings import load_settings
from service.cli.task_ref import TaskDataDir, resolve_task


def render_command(
    file: Path = typer.Argument(..., help="SVG file to render", exists=True, dir_okay=False),
    task_ref: str = typer.Option(..., "--task", help="Task reference ID@VERSION"),
    out: Path = typer.Option(..., "--out", help="Output folder (frames, masks, render.json)"),
    as_json: bool = typer.Option(False, "--json", help="Print render.json to stdout"),
    masks: bool = typer.Option(True, "--masks/--no-masks", help="Part masks (tasks with ids)"),
    timeout: float | None = typer.Option(None, "--timeout", help="Wall-clock limit in seconds"),
    data_dir: Path | None = TaskDataDir,
) -> None:
    """Render FILE in the sandbox at the task's timestamps.

    Writes frame-<ms>.png, the part masks and render.json into --out. Exit status 0 when frames
    were produced, 1 otherwise.
    """
    from service.pipeline.render_client import create_pool, render_artifact

    try:
        task = resolve_task(task_ref, data_dir)
    except UnknownTaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    try:
        svg_text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        typer.echo(f"error: {file} is not UTF-8 text: {exc}", err=True)
        raise typer.Exit(2) from exc
    settings = load_settings()
    try:
        with create_pool(settings, size=1) as pool:
            output = render_artifact(svg_text, task, pool, masks=masks, timeout_s=timeout)
    except ReguaError as exc:
        typer.echo(f"error: the sandboxed renderer could not start: {exc}", err=True)
        raise typer.Exit(1) from exc
    path = output.write(out)
    log = output.log
    if as_json:
        typer.echo(json.dumps(log.model_dump(mode="json"), indent=2, sort_keys=True))
    else:
        typer.echo(
            f"{output.status}: {len(log.frames)} frame(s), {len(log.masks)} mask(s), "
            f"{len(log.blocked_requests)} blocked"
        )
        kinds = log.animation.kinds if log.animation is not None else []
        typer.echo(f"  animation: {kinds or 'none'}; sandbox: {output.sandbox}")
        if output.cause:
            typer.echo(f"  cause: {output.cause}: {output.detail}")
        typer.echo(f"  wrote {path}")
    if output.status != "ok":
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``regua render`` to the main app."""
    app.command("render")(render_command)
