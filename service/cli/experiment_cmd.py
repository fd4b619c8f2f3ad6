"""``regua experiment run FILE``: have the running service run an experiment file, follow it.

The command submits the file to the service (``POST /v1/experiments``) and follows its progress;
it never generates or judges in its own process, so every run of the experiment is judged by
the service that stores it, with the panel the service resolved and recorded when the
experiment started (a panel it cannot seat refuses the experiment, naming the judge). With no
service answering it says what to start (``regua serve`` or ``make run``) and exits non-zero.
Stopped (Ctrl-C), the experiment goes on in the service; the same command again follows it, and
an interrupted one (the service stopped) resumes where it stopped: nothing is generated twice.
A schedule is this command under cron with one window per period (see the README).
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import Progress

from regua.client import Client
from regua.errors import ServiceUnreachableError
from regua.views.experiments import ExperimentProgress

experiment_app = typer.Typer(help="Run experiments: arms x items x repeats, resumable.")
POLL_S = 0.5
ENDED = frozenset({"done", "interrupted", "failed"})
NO_SERVICE = (
    "experiment: an experiment is generated and judged by the running service, and none "
    "answers: start it with `regua serve` (or `make run`), then run this command again"
)


def run(
    file: Path = typer.Argument(..., help="The experiment file (YAML)"),
    window: str = typer.Option("default", help="Time window (a schedule gives each run its own)"),
    generator: str | None = typer.Option(None, help="Registered generator (default: runner)"),
    wait_s: float = typer.Option(3600.0, help="How long to follow the runs being judged"),
    url: str | None = typer.Option(None, help="Service URL (REGUA_URL)"),
    token: str | None = typer.Option(None, help="Bearer token (REGUA_TOKEN)"),
    data_dir: Path | None = typer.Option(None, help="Where to find admin-token"),
) -> None:
    """Submit the experiment to the service, follow it until judged, print the report."""
    from service.cli.service_cmd import service_client
    from service.experiments.exports import summary_lines
    from service.experiments.spec import load_experiment_file

    load_experiment_file(file)  # a broken file is named here, before the service is asked
    text = file.read_text(encoding="utf-8")
    try:
        with service_client(url, token, data_dir) as client:
            accepted = client.start_experiment(file_text=text, window=window, generator=generator)
            ident = accepted.experiment_id
            typer.echo(f"{'resuming' if accepted.resumed else 'starting'} experiment {ident}")
            progress = _follow(client, ident, wait_s)
            typer.echo(status_line(progress))
            if progress.status == "interrupted":
                typer.echo("interrupted: run the same command again to continue", err=True)
                raise typer.Exit(1)
            report = client.experiment_report(ident).model_dump(by_alias=True)
    except ServiceUnreachableError as exc:
        typer.echo(NO_SERVICE, err=True)
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    except KeyboardInterrupt:
        typer.echo("stopped following: the service goes on; run the same command to follow it")
        raise typer.Exit(130) from None
    for line in summary_lines(report):
        typer.echo(line)


def status_line(progress: ExperimentProgress) -> str:
    """``G of P case(s); STATUS`` and, when any, the model calls sent again after a kill."""
    line = f"{progress.generated} of {progress.planned} case(s); {progress.status}"
    if progress.resent_calls:
        line += f"; {progress.resent_calls} model call(s) sent again after a stop cut them off"
    return line


def _follow(client: Client, ident: str, wait_s: float) -> ExperimentProgress:
    """Poll the experiment with a progress bar until it ends or ``wait_s`` passes."""
    deadline = time.monotonic() + wait_s
    with Progress() as bar:
        task = bar.add_task("generating", total=None)
        while True:
            progress = client.experiment(ident)
            label = "judging" if progress.status == "evaluating" else "generating"
            bar.update(
                task, description=label, completed=progress.generated, total=progress.planned
            )
            if progress.status in ENDED or time.monotonic() > deadline:
                return progress
            time.sleep(POLL_S)


def register(app: typer.Typer) -> None:
    """Add ``regua experiment run`` to the main app."""
    experiment_app.command("run")(run)
    app.add_typer(experiment_app, name="experiment")
