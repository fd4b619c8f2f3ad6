"""``regua demo`` and the demo data of ``regua run``: the bundled samples, submitted over HTTP."""

from __future__ import annotations

import contextlib
import tempfile
import threading
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from regua.client import Client, RunView
from regua.settings import Settings, load_settings
from service.api.client import read_token
from service.demo.mock_service import MOCK_BANNER, start_mock_service
from service.demo.pages import come_back_hint, web_pages
from service.demo.samples import (
    DEMO_LABEL,
    Sample,
    default_samples_dir,
    load_samples,
    submit_samples,
)
from service.server.run import free_port
from service.storage.blob_registry import artifacts_url

SYMBOL = {"pass": "✓", "fail": "✗", "uncertain": "?", "not_applicable": "-"}
DEMO_RENDER_WORKERS = 2
"""Render workers of the demo's service, unless ``REGUA_RENDER_WORKERS`` says how many."""
__all__ = [
    "DEMO_LABEL",
    "Sample",
    "default_samples_dir",
    "load_samples",
    "run_demo",
    "submit_samples",
    "summary_table",
    "wait_with_progress",
]


def wait_with_progress(
    client: Client, run_ids: list[str], console: Console, timeout_s: float = 900.0
) -> dict[str, RunView]:
    """Wait for runs with a progress bar."""
    columns = (TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("runs", total=len(run_ids))

        def update(done: int, total: int) -> None:
            progress.update(bar, completed=done, total=total)

        return client.wait(run_ids, timeout_s=timeout_s, on_progress=update)


def summary_table(pairs: list[tuple[Sample, str]], views: dict[str, RunView]) -> Table:
    """One line per sample: outcome, cause and per-criterion statuses."""
    table = Table(
        "sample", "task", "outcome", "criteria", "cause / first reason", "run", title=MOCK_BANNER
    )
    for column in (*table.columns[:4], table.columns[5]):
        column.no_wrap = True
    for sample, run_id in pairs:
        view = views[run_id]
        outcome = view.outcome
        criteria = view.evaluation.criteria if view.evaluation is not None else []
        crit = " ".join(f"{c.criterion}{SYMBOL.get(c.status, c.status)}" for c in criteria)
        reasons = outcome.reasons if outcome is not None else []
        why = (outcome.cause if outcome is not None else None) or (reasons[0] if reasons else "")
        task = sample.task.removeprefix("pelican-bicycle-")
        status = outcome.status if outcome is not None else None
        table.add_row(sample.file, task, str(status), crit, why, run_id)
    return table


def run_demo(
    samples: Path | None = None,
    data_dir: Path | None = None,
    console: Console | None = None,
    *,
    keep: bool = False,
) -> int:
    """Run the samples through a freshly started embedded service; return the exit code.

    Starts the service on a free port with a fresh data folder, submits the samples over HTTP,
    waits and prints the summary. With ``keep`` the service stays up (printing its web pages)
    until Ctrl-C; otherwise it stops and the summary says how to come back to the runs. The exit
    code is 0 when every run finished.
    """
    console = console or Console(width=160)
    folder = samples or default_samples_dir()
    data = data_dir or Path(tempfile.mkdtemp(prefix="regua-demo-"))
    # a fresh SQLite database in the fresh folder, whatever REGUA_DATABASE_URL says
    settings = Settings(data_dir=data, database_url=None, artifact_dir=None, port=free_port())
    if "render_workers" not in settings.model_fields_set:  # REGUA_RENDER_WORKERS is not set
        settings = settings.model_copy(update={"render_workers": DEMO_RENDER_WORKERS})
    console.print(f"demo: data folder {data}")
    console.print(MOCK_BANNER, highlight=False)
    service = start_mock_service(settings, folder)
    server = service.server
    console.print(f"demo: the mock judge knows {service.taught} sample drawings by their frames")
    console.print(f"demo: service at {server.url}/v1 (admin token in {data / 'admin-token'})")
    try:
        with Client(server.url, read_token(data)) as client:
            pairs = submit_samples(client, folder)
            console.print(f"demo: submitted {len(pairs)} samples from {folder}")
            views = wait_with_progress(client, [run_id for _, run_id in pairs], console)
        _print_summary(console, settings, pairs, views)
        first = pairs[0][1] if pairs else None
        if keep:
            _stay_up(console, server.url, first)
        else:
            serving = load_settings()
            for line in come_back_hint(data, f"http://{serving.host}:{serving.port}", first):
                console.print(line, highlight=False)
        return 0 if len(views) == len(pairs) else 1
    finally:
        service.stop()


def _print_summary(
    console: Console,
    settings: Settings,
    pairs: list[tuple[Sample, str]],
    views: dict[str, RunView],
) -> None:
    console.print(summary_table(pairs, views))
    counts: dict[str, int] = {}
    for view in views.values():
        status = view.outcome.status if view.outcome is not None else "none"
        counts[status] = counts.get(status, 0) + 1
    console.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    console.print(f"artifacts: {artifacts_url(settings)} (content-addressed, sha256)")
    console.print(f"database:  {settings.resolved_database_url()}")
    for path in write_demo_report(settings, settings.data_dir / "report"):
        console.print(f"report:    {path}")


def _stay_up(console: Console, url: str, run_id: str | None) -> None:
    """Keep the demo's service serving until Ctrl-C, after printing where to look."""
    console.print(f"demo: the service stays up at {url} (--keep):", highlight=False)
    for what, address in web_pages(url, run_id):
        console.print(f"  {what:<9} {address}", highlight=False, soft_wrap=True)
    console.print(f"  status    regua status RUN_ID --url {url}", highlight=False)
    console.print("press Ctrl-C to stop", highlight=False)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


def write_demo_report(settings: Settings, out_dir: Path) -> list[Path]:
    """Write the HTML report and the CSV/JSON exports of every stored run into ``out_dir``."""
    from service.reports.build import ReportConfig
    from service.reports.db import generate_report
    from service.reports.exports import write_outputs
    from service.storage import Database

    db = Database(settings.resolved_database_url())
    try:
        with db.read() as session:
            report, inputs = generate_report(session, [], ReportConfig())
    finally:
        db.dispose()
    return write_outputs(report, out_dir, rows=inputs.rows)
