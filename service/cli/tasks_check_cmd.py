"""``regua tasks check FILE [--reference SVG]``: acceptance checks for an authored task."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

# Importing these modules registers the judges-level and service-level acceptance checks.
from judges.perturbation import declared_recipes  # noqa: F401
from service.pipeline import reference_check  # noqa: F401
from tasks.acceptance import AcceptanceSubject, registered_acceptance_checks

_STYLE = {"pass": "green", "fail": "red", "skip": "yellow"}


def _read(path: Path, what: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        typer.echo(f"error: {what} {path} is not UTF-8 text: {exc}", err=True)
        raise typer.Exit(2) from exc


def check_command(
    file: Path = typer.Argument(..., help="Task spec (YAML)", exists=True, dir_okay=False),
    reference: Path | None = typer.Option(
        None,
        "--reference",
        help="Reference drawing (SVG) that must pass the task's criteria",
        exists=True,
        dir_okay=False,
    ),
) -> None:
    """Run the acceptance checks a task passes before it enters a pool.

    Prints each check as PASS / FAIL / SKIP with its reason; exit status 1 when any check
    fails. With --reference the drawing is rendered in the sandbox and judged.
    """
    text = _read(file, "task spec")
    svg = _read(reference, "reference drawing") if reference is not None else None
    subject = AcceptanceSubject.from_text(text, str(file), svg)
    console = Console(highlight=False)
    failed = 0
    with console.status("running acceptance checks") as status:
        for check in registered_acceptance_checks():
            status.update(f"running {check.id}")
            outcome = check.run(subject)
            style = _STYLE[outcome.status]
            console.print(
                f"[{style}]{outcome.status.upper():4}[/{style}] {outcome.check}: {outcome.reason}",
                soft_wrap=True,
            )
            failed += outcome.status == "fail"
    if failed:
        console.print(f"{failed} check(s) failed: fix them before the task enters a pool")
        raise typer.Exit(1)
    console.print("every acceptance check passes")
