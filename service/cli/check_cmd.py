"""``regua check FILE... --task ID@VERSION [--json]``: extraction and static checks from the CLI.

Exit codes: 0 when every file passes, 1 when any file fails, 2 for a usage error (unknown task,
missing, unreadable or binary file). Files may be raw model replies or SVG documents.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from checks import CheckReport, check_reply
from regua.errors import UnknownTaskError
from service.cli.task_ref import TaskDataDir, resolve_task
from tasks import TaskSpec

MAX_INPUT_BYTES = 20_000_000
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_STATUS_STYLE = {"pass": "green", "fail": "bold red", "not_applicable": "dim"}


@dataclass(frozen=True, slots=True)
class InputProblem:
    """Why a file could not be checked at all (a usage error, not a verdict on the work)."""

    file: str
    message: str


def read_input(path: Path) -> bytes | InputProblem:
    """Read a reply or SVG file, refusing directories, huge files and binary content."""
    name = str(path)
    try:
        if path.is_dir():
            return InputProblem(name, "is a directory, not a file")
        with path.open("rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        return InputProblem(name, "no such file")
    except PermissionError:
        return InputProblem(name, "permission denied")
    except OSError as exc:
        return InputProblem(name, f"cannot be read: {exc.strerror or exc}")
    if len(data) > MAX_INPUT_BYTES:
        return InputProblem(name, f"larger than {MAX_INPUT_BYTES} bytes; not a model reply")
    if not data.startswith(_TEXT_BOMS):
        nul = data.find(b"\x00", 0, 65536)
        if nul >= 0:
            return InputProblem(
                name, f"looks binary (NUL byte at offset {nul}); expected an SVG or a text reply"
            )
    return data


def report_json(file: str, report: CheckReport) -> dict[str, Any]:
    """One JSON line: file, extraction, overall status, and every check's result."""
    body = report.to_dict()
    return {
        "file": file,
        "task": body["task"],
        "checker": body["checker"],
        "extraction": body["extraction"],
        "status": body["status"],
        "failed": body["failed"],
        "checks": body["checks"],
    }


def _print_table(console: Console, file: str, report: CheckReport) -> None:
    ex = report.extraction
    style = _STATUS_STYLE[report.status]
    console.print(f"[bold]{escape(file)}[/bold]  [{style}]{report.status.upper()}[/{style}]")
    if ex is not None:
        if ex.status == "no_svg":
            console.print("  extraction: [bold red]no SVG found[/bold red] in the reply")
            return
        console.print(
            f"  extraction: {ex.method} ({ex.candidates} candidate(s), chose #{ex.chosen_index};"
            f" {ex.procedure_id}@{ex.procedure_version})"
        )
    table = Table("check", "status", "line", "path", "evidence", show_lines=False)
    for r in report.results:
        first = r.evidence[0] if r.evidence else None
        detail = ""
        if first is not None:
            detail = first.message + (f" — {first.snippet}" if first.snippet else "")
            if len(r.evidence) > 1:
                detail += f" (+{len(r.evidence) - 1} more)"
        st = _STATUS_STYLE[r.status]
        table.add_row(
            f"{r.id}@{r.version}",
            f"[{st}]{r.status}[/{st}]",
            "" if first is None or first.line is None else str(first.line),
            "" if first is None or first.path is None else escape(first.path),
            escape(detail),
        )
    console.print(table)


def _resolve_task(ref: str, data_dir: Path | None) -> TaskSpec:
    try:
        return resolve_task(ref, data_dir)
    except (UnknownTaskError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def check_command(
    files: list[Path] = typer.Argument(
        ..., help="Raw model replies or SVG files", metavar="FILE..."
    ),
    task: str = typer.Option(..., "--task", help="Task reference ID@VERSION"),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON line per file"),
    data_dir: Path | None = TaskDataDir,
) -> None:
    """Extract the SVG from each file and run the static checks of the task on it."""
    spec = _resolve_task(task, data_dir)
    console = Console(highlight=False, soft_wrap=False, width=160)
    any_fail = False
    usage_error = False
    for path in files:
        data = read_input(path)
        if isinstance(data, InputProblem):
            usage_error = True
            typer.echo(f"error: {data.file}: {data.message}", err=True)
            if as_json:
                typer.echo(
                    json.dumps({"file": data.file, "status": "error", "error": data.message})
                )
            continue
        report = check_reply(data, spec)
        any_fail = any_fail or report.status != "pass"
        if as_json:
            typer.echo(json.dumps(report_json(str(path), report)))
        else:
            _print_table(console, str(path), report)
    if usage_error:
        raise typer.Exit(2)
    if any_fail:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``regua check`` to the main app."""
    app.command("check")(check_command)
