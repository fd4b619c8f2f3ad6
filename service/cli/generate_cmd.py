"""``regua generate``: the running service calls a model for a task; each reply becomes a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from regua.client import Client
from regua.errors import GenerationError
from regua.views.jobs import ChainView, GenerationJobView
from regua.views.submissions import RunView
from service.cli.options import Api, ApiKeyEnv, BaseUrl, MaxTokens, ModelName, Temperature
from service.cli.service_cmd import friendly, service_client

NOT_AVAILABLE = "not available"
REVISE_HELP = (
    "Render-and-revise rounds: show the model its rendered frames (never a verdict) and ask "
    "again, N times; each round is a run linked to the previous one"
)
FINDINGS_HELP = "Also show the static checks' findings in each revision round"


def generate(
    task: str = typer.Option(..., "--task", help="Task reference ID@VERSION"),
    api: str = Api,
    model: str = ModelName,
    base_url: str | None = BaseUrl,
    api_key_env: str | None = ApiKeyEnv,
    repeats: int = typer.Option(1, "--repeats", min=1, max=1000, help="Calls for the task"),
    label: str | None = typer.Option(None, "--label", help="Model label (default: --model)"),
    provider: str | None = typer.Option(
        None, "--provider", help="Who serves the model (default: the base URL's host, else --api)"
    ),
    temperature: float | None = Temperature,
    max_tokens: int | None = MaxTokens,
    timeout_s: float = typer.Option(120.0, "--timeout", help="Seconds per call to the model"),
    revise: int = typer.Option(0, "--revise", min=0, max=5, help=REVISE_HELP),
    revise_findings: bool = typer.Option(False, "--revise-findings", help=FINDINGS_HELP),
    wait: bool = typer.Option(False, "--wait", help="Also wait for every run's outcome"),
    url: str | None = typer.Option(None, help="Service URL (REGUA_URL)"),
    token: str | None = typer.Option(None, help="Bearer token (REGUA_TOKEN)"),
    data_dir: Path | None = typer.Option(None, help="Where to find admin-token"),
) -> None:
    """Have the service call a model --repeats times; every reply is evaluated as a run.

    Prints the run ids once the replies are stored; ``--wait`` also waits for the outcomes and
    shows tokens, latency, attempts and cost per run. The API key never leaves the service: name
    its variable with ``--api-key-env``.
    """
    console = Console()
    request: dict[str, Any] = {
        "task": task,
        "api": api,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "repeats": repeats,
        "label": label,
        "provider": provider,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout_s": timeout_s,
        "revise": revise,
        "revise_findings": revise_findings,
    }
    with service_client(url, token, data_dir) as client:
        job = _generate_with_progress(client, request, console)
        ids = list(job.run_ids)
        for run_id in ids:
            console.print(f"{run_id}  queued")
        for chain in job.chains:
            ids += chain.run_ids[1:]
            console.print(_chain_line(chain))
        if not wait:
            return
        from service.demo.run import wait_with_progress

        views = wait_with_progress(client, ids, console)
    console.print(_table([views[i] for i in ids]))


def _generate_with_progress(
    client: Client, request: dict[str, Any], console: Console
) -> GenerationJobView:
    """POST the generation and follow its job with a progress bar until it ends."""
    job = client.generate(request)
    if job.mock:
        console.print("[bold yellow]MOCK provider: bundled replies, not a model's[/]")
    columns = (TextColumn("generating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("generating", total=job.repeats * (1 + job.revise))
        while job.state == "running":
            progress.update(bar, completed=job.done + job.rounds_done)
            time.sleep(0.2)
            job = client.generation(job.job_id)
        progress.update(bar, completed=job.done + job.rounds_done)
    if job.resent_calls:
        console.print(resent_line(job))
    if job.state != "done":
        raise GenerationError(f"generation {job.job_id} failed: {job.error}")
    return job


def resent_line(job: GenerationJobView) -> str:
    """The line saying how many calls a kill made the job send again (same Idempotency-Key)."""
    return (
        f"{job.resent_calls} model call(s) sent again after a stop cut them off "
        "(same Idempotency-Key: a provider that honours it generated once)"
    )


def _chain_line(chain: ChainView) -> str:
    """``R0 -> R1 -> R2  (rounds 0..2)`` plus why a chain stopped early."""
    line = f"{' -> '.join(chain.run_ids)}  revised {len(chain.run_ids) - 1} time(s)"
    return line + (f"; stopped: {chain.stopped}" if chain.stopped else "")


def _table(views: list[RunView]) -> Table:
    """One line per run: repeat, outcome (cause), tokens, latency, attempts, cost."""
    table = Table(
        "run", "repeat", "round", "outcome", "tokens in/out", "latency ms", "attempts", "cost"
    )
    for view in views:
        gen, outcome = view.generation, view.outcome
        cause = f" ({outcome.cause})" if outcome is not None and outcome.cause else ""
        cost = gen.cost_usd if gen is not None else None
        latency = gen.latency_ms if gen is not None else None
        table.add_row(
            view.run_id,
            str(gen.repeat) if gen is not None else "",
            str(view.revision.round if view.revision is not None else 0),
            f"{outcome.status if outcome is not None else None}{cause}",
            f"{_n(gen and gen.input_tokens)}/{_n(gen and gen.output_tokens)}",
            f"{latency:.0f}" if latency is not None else NOT_AVAILABLE,
            str(gen.attempts) if gen is not None else "",
            f"${cost:.6f}" if cost is not None else NOT_AVAILABLE,
        )
    return table


def _n(value: object) -> str:
    return str(value) if isinstance(value, int) else "?"


def register(app: typer.Typer) -> None:
    """Add ``regua generate``."""
    app.command("generate")(friendly(generate))
