"""``regua tasks list`` and ``regua tasks show ID@VERSION``.

Both read the one task registry of a command (:mod:`service.tasks_store.configured`): the
bundled versions plus those added to the configured task store (``REGUA_DATABASE_URL`` /
``REGUA_DATA_DIR``, or ``--data-dir``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from regua.settings import load_settings
from service.access.pools import Retirement, registry_retirements
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


@tasks_app.command("list")
def list_tasks(
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines"),
    data_dir: Path | None = DataDir,
) -> None:
    """List every registered task version: bundled and added, with pool and state."""
    listed = listed_tasks(data_dir)
    if as_json:
        for line in listed:
            typer.echo(json.dumps(line.to_json()))
        return
    console = Console()
    console.print(tasks_table(listed))
    for line in listed:
        if line.retired is not None:
            console.print(f"retired {line.spec.ref}: {line.retired.note}")


def tasks_table(listed: Sequence[Listed]) -> Table:
    """One line per task version; refs are never cut (they are what users copy into commands).

    The ref column is as wide as the longest ref and never wraps; the other columns wrap (a
    narrow terminal makes the table taller, it never loses characters). Family and mode are left
    to ``--json`` and ``tasks show``.
    """
    widest = max((len(line.spec.ref) for line in listed), default=4)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("task", no_wrap=True, min_width=widest, overflow="ignore")
    for name in ("origin", "pool", "state"):
        table.add_column(name, overflow="fold")
    table.add_column("criteria", ratio=1, min_width=8, overflow="fold")
    table.add_column("title", ratio=2, min_width=10, overflow="fold")
    for line in listed:
        spec = line.spec
        criteria = " ".join(c.id for c in spec.criteria)
        table.add_row(spec.ref, line.origin, spec.pool.value, line.state, criteria, spec.title)
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
