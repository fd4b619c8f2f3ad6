"""``regua tasks list`` and ``regua tasks show ID@VERSION``."""

from __future__ import annotations

import json
from collections.abc import Sequence

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from regua.errors import UnknownTaskError
from tasks import TaskSpec, bundled_registry

tasks_app = typer.Typer(
    help="List and show the bundled task specs; add your own (a running service).",
    no_args_is_help=True,
)


@tasks_app.command("list")
def list_tasks(as_json: bool = typer.Option(False, "--json", help="Print JSON lines")) -> None:
    """List every registered task version."""
    registry = bundled_registry()
    if as_json:
        for spec in registry.all():
            line = {
                "ref": spec.ref,
                "family": spec.family,
                "pool": spec.pool.value,
                "mode": spec.mode.value,
                "title": spec.title,
                "content_hash": registry.content_hash(spec.ref),
            }
            typer.echo(json.dumps(line))
        return
    Console().print(tasks_table(registry.all()))


def tasks_table(specs: Sequence[TaskSpec]) -> Table:
    """One line per task version; refs are never cut (they are what users copy into commands).

    The ref column is as wide as the longest ref and never wraps; criteria and title wrap (a
    narrow terminal makes the table taller, it never loses characters). The family is the ref's
    prefix, so it is left to ``--json`` and ``tasks show``.
    """
    widest = max((len(spec.ref) for spec in specs), default=4)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("task", no_wrap=True, min_width=widest, overflow="ignore")
    table.add_column("pool", no_wrap=True)
    table.add_column("mode", no_wrap=True)
    table.add_column("criteria", ratio=1, min_width=8, overflow="fold")
    table.add_column("title", ratio=2, min_width=10, overflow="fold")
    for spec in specs:
        criteria = " ".join(c.id for c in spec.criteria)
        table.add_row(spec.ref, spec.pool.value, spec.mode.value, criteria, spec.title)
    return table


@tasks_app.command("show")
def show_task(
    ref: str = typer.Argument(..., help="Task reference ID@VERSION"),
    as_json: bool = typer.Option(False, "--json", help="Print the full spec as JSON"),
) -> None:
    """Show one task: prompt, constraints, render profile, animation plan and acceptance table."""
    registry = bundled_registry()
    try:
        spec = registry.get(ref)
    except UnknownTaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(spec.to_wire(), indent=2))
        return
    console = Console()
    console.print(f"[bold]{spec.ref}[/bold]  {spec.title}")
    console.print(f"family {spec.family} · pool {spec.pool.value} · mode {spec.mode.value}")
    console.print(f"content hash {registry.content_hash(spec.ref)}")
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
