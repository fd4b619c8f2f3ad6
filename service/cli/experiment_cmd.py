"""``regua experiment run FILE``: run an experiment file resumably on this machine.

It opens the service's data folder (database, artifacts, render pool) in this process, asks the
generator for every case not stored yet, waits for the runs to be judged and prints the paired
report. Stopped (Ctrl-C, SIGTERM, or killed), it continues where it stopped when run again with
the same file and window; nothing is generated twice. A schedule is this command under cron
with one window per period (see the README).
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import typer
from rich.progress import Progress

from regua.errors import ReguaError
from regua.settings import load_settings

experiment_app = typer.Typer(help="Run experiments: arms x items x repeats, resumable.")


def run(
    file: Path = typer.Argument(..., help="The experiment file (YAML)"),
    window: str = typer.Option("default", help="Time window (a schedule gives each run its own)"),
    generator: str | None = typer.Option(None, help="Registered generator (default: runner)"),
    wait_s: float = typer.Option(3600.0, help="How long to wait for the runs to be judged"),
    data_dir: Path | None = typer.Option(None, help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Generate the experiment's missing cases, wait for their verdicts, print the report."""
    from service.context import ServiceContext
    from service.experiments.exports import summary_lines
    from service.experiments.generator import get_generator
    from service.experiments.plan import resolve_plan
    from service.experiments.report_db import experiment_report
    from service.experiments.runner import run_experiment
    from service.experiments.spec import load_experiment_file
    from service.experiments.store import open_experiment

    settings = load_settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        spec = load_experiment_file(file)
        gen = get_generator(generator)
        ctx = ServiceContext.open(settings)
    except ReguaError as exc:
        typer.echo(f"experiment: {exc}", err=True)
        raise typer.Exit(2) from exc
    try:
        plan = resolve_plan(spec, ctx.registry)
        for arm in plan.arms:  # the command line runs with the data folder's own rights
            gen.check(ctx, next(iter(arm.refs.values())), arm.model, is_admin=True)
        ident, resumed = open_experiment(ctx.db, spec, plan, window, None)
        typer.echo(f"{'resuming' if resumed else 'starting'} experiment {ident}")
        ctx.start_executor()
        with Progress() as bar:
            task = bar.add_task("generating", total=len(plan.arms) * len(plan.items) * plan.repeats)
            result = run_experiment(
                ctx,
                ident,
                gen,
                token_id=None,
                stop=stop,
                wait_s=wait_s,
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        typer.echo(f"{result.generated} case(s) generated now; status {result.status}")
        for line in summary_lines(experiment_report(ctx.db, ident)):
            typer.echo(line)
    except KeyboardInterrupt:
        typer.echo("interrupted: run the same command again to continue", err=True)
        raise typer.Exit(130) from None
    except ReguaError as exc:
        typer.echo(f"experiment: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        ctx.close()


def register(app: typer.Typer) -> None:
    """Add ``regua experiment run`` to the main app."""
    experiment_app.command("run")(run)
    app.add_typer(experiment_app, name="experiment")
