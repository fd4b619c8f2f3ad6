"""``regua tasks list`` and ``regua tasks show ID@VERSION``.

Both read the one task registry of a command (:mod:`service.tasks_store.configured`): the
bundled versions plus those added to the configured task store (``REGUA_DATABASE_URL`` /
``REGUA_DATA_DIR``, or ``--data-dir``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from regua.client import Client
from regua.errors import ApiError
from regua.settings import load_settings
from service.access.pools import Retirement, registry_retirements
from service.api.client import read_token
from service.tasks_store.configured import configured_tasks, origin_of, with_data_dir
from tasks import TaskSpec

tasks_app = typer.Typer(
    help="List and show the registered task versions (bundled and added); add your own.",
    no_args_is_help=True,
)


DataDir = typer.Option(
    None, "--data-dir", help="Data folder whose task store to read (REGUA_DATA_DIR)"
)


@dataclass(frozen=True)
class Listed:
    """One task version as ``regua tasks list`` shows it."""

    spec: TaskSpec
    content_hash: str
    origin: str
    retired: Retirement | None

    @property
    def state(self) -> str:
        """``active`` or ``retired``."""
        return "active" if self.retired is None else "retired"

    def to_json(self) -> dict[str, object]:
        """One JSON line."""
        return {
            "ref": self.spec.ref,
            "family": self.spec.family,
            "origin": self.origin,
            "pool": self.spec.pool.value,
            "state": self.state,
            "retired_note": self.retired.note if self.retired else None,
            "mode": self.spec.mode.value,
            "title": self.spec.title,
            "criteria": [c.id for c in self.spec.criteria],
            "content_hash": self.content_hash,
        }


def listed_tasks(data_dir: Path | None) -> list[Listed]:
    """Every registered task version: bundled, and added to the configured task store."""
    settings = with_data_dir(load_settings(), data_dir)
    with configured_tasks(settings) as registry:
        notes = registry_retirements(registry)
        return [
            Listed(
                spec,
                registry.content_hash(spec.ref),
                origin_of(registry, spec.ref),
                notes.get(spec.ref),
            )
            for spec in registry.all()
        ]


def served_tasks(url: str, token: str | None, data_dir: Path | None) -> list[dict[str, Any]]:
    """The task versions a running service lists (``GET /v1/tasks``), as JSON lines."""
    settings = with_data_dir(load_settings(), data_dir)
    secret = token or os.environ.get("REGUA_TOKEN") or read_token(settings.data_dir)
    with Client(url, secret) as client:
        response = client.http.get("/v1/tasks")
        body = response.json()
        if response.status_code >= 400:
            raise ApiError(response.status_code, body)
    return [
        {
            "ref": t["ref"],
            "family": t["family"],
            "origin": t["origin"],
            "pool": t["pool"],
            "state": "retired" if t["retired"] else "active",
            "retired_note": t.get("retired_note"),
            "mode": t["mode"],
            "title": t["title"] if t["title"] is not None else "(reserved: redacted)",
            "criteria": t["criteria"],
            "content_hash": t["content_hash"],
        }
        for t in body["tasks"]
    ]


@tasks_app.command("list")
def list_tasks(
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines"),
    data_dir: Path | None = DataDir,
    url: str | None = typer.Option(
        None, "--url", help="Ask this running service instead (GET /v1/tasks, any role's token)"
    ),
    token: str | None = typer.Option(None, "--token", help="Token for --url (REGUA_TOKEN)"),
) -> None:
    """List every registered task version: bundled and added, with pool and state."""
    if url is not None:
        lines = served_tasks(url, token, data_dir)
    else:
        lines = [line.to_json() for line in listed_tasks(data_dir)]
    if as_json:
        for line in lines:
            typer.echo(json.dumps(line))
        return
    console = Console()
    console.print(tasks_table(lines))
    for line in lines:
        if line["state"] == "retired":
            console.print(f"retired {line['ref']}: {line['retired_note'] or '(no reason given)'}")


def tasks_table(lines: Sequence[Mapping[str, Any]]) -> Table:
    """One line per task version; refs are never cut (they are what users copy into commands).

    The ref column is as wide as the longest ref and never wraps; the other columns wrap (a
    narrow terminal makes the table taller, it never loses characters). Family and mode are left
    to ``--json`` and ``tasks show``.
    """
    widest = max((len(str(line["ref"])) for line in lines), default=4)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("task", no_wrap=True, min_width=widest, overflow="ignore")
    for name in ("origin", "pool", "state"):
        table.add_column(name, overflow="fold")
    table.add_column("criteria", ratio=1, min_width=8, overflow="fold")
    table.add_column("title", ratio=2, min_width=10, overflow="fold")
    for line in lines:
        cells = [str(line[k]) for k in ("ref", "origin", "pool", "state")]
        table.add_row(*cells, " ".join(line["criteria"]), str(line["title"]))
    return table


@tasks_app.command("show")
def show_task(
    ref: str = typer.Argument(..., help="Task reference ID@VERSION"),
    as_json: bool = typer.Option(False, "--json", help="Print the full spec as JSON"),
    data_dir: Path | None = DataDir,
) -> None:
    """Show one task: prompt, constraints, render profile, animation plan and acceptance table."""
    found = [line for line in listed_tasks(data_dir) if line.spec.ref == ref]
    if not found:
        with configured_tasks(with_data_dir(load_settings(), data_dir)) as registry:
            registry.get(ref)  # UnknownTaskError naming every known task: exit 2
    line = found[0]
    spec = line.spec
    if as_json:
        typer.echo(json.dumps(spec.to_wire(), indent=2))
        return
    console = Console()
    console.print(f"[bold]{spec.ref}[/bold]  {spec.title}")
    console.print(
        f"family {spec.family} · {line.origin} · pool {spec.pool.value} · {line.state}"
        f" · mode {spec.mode.value}"
    )
    if line.retired is not None:
        console.print(f"retired by {line.retired.retired_by}: {line.retired.note}", soft_wrap=True)
    console.print(f"content hash {line.content_hash}")
    console.print("\n[bold]Prompt[/bold]\n" + spec.prompt)
    allowed = [k for k, v in spec.output.allowed.model_dump().items() if v] or ["nothing"]
    console.print(
        f"[bold]Output[/bold] viewBox {spec.output.required_viewbox!r}, max {spec.output.max_bytes}"
        f" bytes, {spec.output.max_elements} elements; allowed: {', '.join(allowed)}"
    )
    if spec.output.required_ids:
        console.print("required ids: " + ", ".join(spec.output.required_ids))
    r = spec.render
    console.print(
        f"[bold]Render[/bold] {r.id}: {r.viewport_width}x{r.viewport_height}"
        f" @{r.device_scale_factor}, background {r.background}, fonts {r.font_set}"
    )
    if spec.animation is not None:
        times = ", ".join(f"{t:g}" for t in spec.timestamps())
        console.print(f"[bold]Animation[/bold] loop {spec.animation.loop_s}s, times: {times}")
    table = Table("criterion", "kind", "question", "not applicable when")
    for c in spec.criteria:
        table.add_row(c.id, c.kind.value, c.question, c.not_applicable_when or "")
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``regua tasks`` to the main app (with ``retire``, ``bank`` and ``check``)."""
    from service.cli.pools_cmd import bank, retire
    from service.cli.tasks_check_cmd import check_command

    tasks_app.command("retire")(retire)
    tasks_app.command("bank")(bank)
    tasks_app.command("check")(check_command)
    app.add_typer(tasks_app, name="tasks")
