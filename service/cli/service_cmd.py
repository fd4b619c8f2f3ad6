"""``regua serve | worker | submit | status | demo | run`` (tokens: :mod:`.token_cmd`)."""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from regua.client import Client, RunInput
from regua.errors import ReguaError
from regua.settings import Settings, load_settings
from service.api.client import read_token


def _settings(data_dir: Path | None, host: str | None = None, port: int | None = None) -> Settings:
    settings = load_settings()
    updates: dict[str, object] = {}
    if data_dir is not None:
        updates["data_dir"] = data_dir
    if host is not None:
        updates["host"] = host
    if port is not None:
        updates["port"] = port
    return settings.model_copy(update=updates)


def _client(url: str | None, token: str | None, data_dir: Path | None) -> Client:
    settings = _settings(data_dir)
    base = url or os.environ.get("REGUA_URL") or f"http://{settings.host}:{settings.port}"
    secret = token or os.environ.get("REGUA_TOKEN") or read_token(settings.data_dir)
    return Client(base, secret)


def serve(
    host: str | None = typer.Option(None, help="Bind address (REGUA_HOST)"),
    port: int | None = typer.Option(None, help="Port (REGUA_PORT)"),
    data_dir: Path | None = typer.Option(None, help="Data folder (REGUA_DATA_DIR)"),
    no_worker: bool = typer.Option(
        False, "--no-worker", help="Run only the API; `regua worker` processes run the pipeline"
    ),
) -> None:
    """Run the API, the pipeline's workers (unless --no-worker) and the sandboxed render pool."""
    from service.server.run import serve as run_server

    settings = _settings(data_dir, host, port)
    if no_worker:
        settings = settings.model_copy(update={"serve_worker": False})
    run_server(settings, typer.echo)


def worker(
    data_dir: Path | None = typer.Option(None, help="Data folder (REGUA_DATA_DIR)"),
    threads: int = typer.Option(2, help="Executor threads"),
    lanes: str | None = typer.Option(
        None,
        help="Procrastinate workers to run, comma-separated: render (checks, cheap renders), "
        "heavy (heavy-lane renders), judge (REGUA_WORKER_LANES; default all three)",
    ),
) -> None:
    """Run only the pipeline's workers (scale-out: same stage code as ``serve``, no API).

    With PostgreSQL (``REGUA_QUEUE=auto`` or ``procrastinate``) it runs procrastinate workers
    on the render, render_heavy and judge queues (``--lanes`` picks some); otherwise the
    in-process executor on the shared database.
    """
    from service.context import ServiceContext
    from service.experiments.jobs import KIND as EXPERIMENT_JOBS
    from service.generation.jobs import KIND as GENERATION_JOBS

    settings = _settings(data_dir)
    if lanes is not None:
        try:
            settings = Settings.model_validate({**settings.model_dump(), "worker_lanes": lanes})
        except ValueError as exc:  # pydantic's ValidationError: an unknown lane
            raise typer.BadParameter(str(exc), param_hint="--lanes") from exc
    ctx = ServiceContext.open(settings)
    ctx.start_workers(threads)
    owner = ctx.executor.owner if ctx.executor else f"pid {os.getpid()}"
    typer.echo(f"regua worker {owner} ({ctx.dispatcher.name} queue) on {ctx.db.url}", err=False)
    if ctx.workers is not None:  # the generate queue: jobs registered by the modules imported
        typer.echo(f"generate queue: {GENERATION_JOBS} and {EXPERIMENT_JOBS} jobs")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        ctx.close()


def submit(
    files: list[Path] = typer.Argument(..., exists=True, dir_okay=False, help="Raw reply files"),
    task: str = typer.Option(..., "--task", help="Task reference ID@VERSION"),
    model: str = typer.Option(..., "--model", help="Model label"),
    provider: str | None = typer.Option(None, help="Model provider"),
    panel: str | None = typer.Option(None, "--panel", help="Judge panel ID@VERSION"),
    no_wait: bool = typer.Option(False, "--no-wait", help="Print run ids and exit"),
    url: str | None = typer.Option(None, help="Service URL (REGUA_URL)"),
    token: str | None = typer.Option(None, help="Bearer token (REGUA_TOKEN)"),
    data_dir: Path | None = typer.Option(None, help="Where to find admin-token"),
) -> None:
    """Submit raw replies; prints run ids and waits with a progress bar unless --no-wait."""
    from service.demo.run import wait_with_progress

    console = Console()
    runs = [
        RunInput(
            task=task,
            model=model,
            provider=provider,
            output=f.read_text(encoding="utf-8"),
            panel=panel or None,
        )
        for f in files
    ]
    with _client(url, token, data_dir) as client:
        ids = [r.run_id for r in client.submit_batch(runs).runs]
        for f, run_id in zip(files, ids, strict=True):
            console.print(f"{run_id}  {f}")
        if no_wait:
            return
        views = wait_with_progress(client, ids, console)
    for f, run_id in zip(files, ids, strict=True):
        outcome = views[run_id].outcome
        cause = f" ({outcome.cause})" if outcome is not None and outcome.cause else ""
        console.print(f"{run_id}  {outcome.status if outcome else None}{cause}  {f}")


def status(
    run_id: str = typer.Argument(..., help="Run id"),
    as_json: bool = typer.Option(False, "--json", help="Print the full run record"),
    url: str | None = typer.Option(None, help="Service URL (REGUA_URL)"),
    token: str | None = typer.Option(None, help="Bearer token (REGUA_TOKEN)"),
    data_dir: Path | None = typer.Option(None, help="Where to find admin-token"),
) -> None:
    """Show a run's status, outcome and per-criterion results."""
    with _client(url, token, data_dir) as client:
        view = client.run(run_id)
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
        return
    outcome = view.outcome
    typer.echo(f"run {view.run_id}  task {view.task}  status {view.status}")
    if outcome is None:
        typer.echo("outcome not decided yet (the run is still in the pipeline)")
    else:
        typer.echo(
            f"outcome {outcome.status}" + (f"  cause {outcome.cause}" if outcome.cause else "")
        )
    criteria = view.evaluation.criteria if view.evaluation is not None else []
    for c in criteria:
        review = f"  review: {c.review_reason}" if c.review_required else ""
        typer.echo(f"  {c.criterion:<4} {c.kind:<10} {c.status}{review}")
    awaiting = sum(1 for c in criteria if c.review_required)
    if awaiting:
        typer.echo(
            f"{awaiting} criteria await a human label: label them at /review or with `regua review`"
        )
    typer.echo(f"{len(view.artifacts)} artifacts")


def demo(
    samples: Path | None = typer.Option(None, help="Samples folder with manifest.json"),
    data_dir: Path | None = typer.Option(None, help="Data folder (default: a fresh temp folder)"),
    keep: bool = typer.Option(False, "--keep", help="Keep the service up until Ctrl-C"),
) -> None:
    """Run the bundled samples through a freshly started embedded service.

    Starts the service on a free port with a fresh data folder, submits the samples over HTTP,
    waits and prints a summary per sample. The service then stops (the summary says how to
    serve the data folder again) unless ``--keep`` leaves it up, printing its web pages.
    """
    from service.demo.run import run_demo

    raise typer.Exit(run_demo(samples, data_dir, keep=keep))


def run(
    host: str | None = typer.Option(None, help="Bind address (REGUA_HOST)"),
    port: int | None = typer.Option(None, help="Port (REGUA_PORT)"),
    data_dir: Path | None = typer.Option(None, help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """``make run``: serve with the demo samples loaded; prints the URL and the admin token."""
    from service.demo.serve import serve_with_demo

    serve_with_demo(_settings(data_dir, host, port))


def _friendly(func: Callable[..., None]) -> Callable[..., None]:
    """Print regua errors as one line and exit 1 instead of a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except ReguaError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc

    return wrapper


def register(app: typer.Typer) -> None:
    """Add the service commands to the main app."""
    for name, func in (
        ("serve", serve),
        ("worker", worker),
        ("submit", submit),
        ("status", status),
        ("demo", demo),
        ("run", run),
    ):
        app.command(name)(_friendly(func))


#: For other command modules that talk to the running service (e.g. ``regua generate``).
service_client = _client
friendly = _friendly
