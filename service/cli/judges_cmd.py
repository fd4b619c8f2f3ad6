"""``regua judges add FILE`` and ``regua judges list``: judge profiles and panels as data.

``add`` checks a YAML judge file (profiles and panels) against the built-ins and the folder
``REGUA_JUDGES_DIR`` (or ``--dir``), copies it there and locks the content hash of every id it
declares; ``list`` shows every registered profile (with the id it votes under with the current
settings) and panel. Exit codes: 0 done, 2 a bad file or folder (the message names the file and
the field).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

import judges
from judges.listing import describe_panel, describe_profile
from regua.errors import ReguaError
from regua.settings import load_settings
from service.cli.options import AsJson
from service.tasks_store.configured import configured_tasks, families_of, with_data_dir

judges_app = typer.Typer(help="Judge profiles and panels declared in YAML.", no_args_is_help=True)


def _folder(folder: Path | None) -> Path:
    chosen = folder or load_settings().judges_dir
    if chosen is None:
        typer.echo("error: give --dir or set REGUA_JUDGES_DIR", err=True)
        raise typer.Exit(2)
    return chosen


def configured_families(data_dir: Path | None = None) -> judges.FamilySource:
    """The task families of the configured task store, read when first asked for."""

    def read() -> dict[str, set[str]]:
        with configured_tasks(with_data_dir(load_settings(), data_dir)) as registry:
            return families_of(registry)

    return read


@judges_app.command("add")
def add_command(
    file: Path = typer.Argument(..., help="A YAML judge file (profiles and/or panels)"),
    folder: Path | None = typer.Option(None, "--dir", help="Judges folder (REGUA_JUDGES_DIR)"),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Data folder whose task store holds the panel's family"
    ),
) -> None:
    """Check FILE, copy it into the judges folder and freeze every id it declares.

    A panel may be for any task family with a registered version: bundled, or added to the
    configured task store (``--data-dir``, ``REGUA_DATA_DIR`` / ``REGUA_DATABASE_URL``). A
    running service on that folder picks the file up on its next panel lookup (no restart).
    """
    target = _folder(folder)
    loaded = judges.add_judge_file(file, target, configured_families(data_dir))
    for profile, _src in loaded.profiles:
        typer.echo(f"profile {profile.id}  kind {profile.kind}  hash {profile.content_hash()}")
    for panel, _src in loaded.panels:
        typer.echo(f"panel {panel.id}  family {panel.family}  hash {panel.content_hash()}")
    typer.echo(f"added {file.name} to {target}; a service reading it picks it up without restart")


@judges_app.command("list")
def list_command(as_json: bool = AsJson) -> None:
    """Every registered judge profile and panel (built-in and from the judges folder)."""
    settings = load_settings()
    profiles = [describe_profile(p, settings) for p in judges.list_profiles()]
    panels = [describe_panel(p) for p in judges.list_panels()]
    if as_json:
        typer.echo(json.dumps({"judges": profiles, "panels": panels}, indent=2))
        return
    for p in profiles:
        votes = p["votes_as"]["id"] if p["votes_as"] else f"not seatable: {p['problem']}"
        typer.echo(f"{p['id']:<30} {p['kind']:<11} hash {p['content_hash'][:12]}  votes as {votes}")
    for panel in panels:
        typer.echo(f"panel {panel['id']:<30} family {panel['family']}  ({panel['source']})")
        for criterion, ids in panel["assignments"].items():
            typer.echo(f"    {criterion}: {', '.join(ids)}")


def load_judges_folder() -> None:
    """Register ``REGUA_JUDGES_DIR``'s judge files before any command runs (exit 2 if bad).

    Only that variable is read here, so a command that never needs settings is not stopped by
    another malformed ``REGUA_*`` value.
    """
    folder = os.environ.get("REGUA_JUDGES_DIR")
    if not folder:
        return
    try:
        # lenient: a panel's family was checked when it was added, against the task store
        # named then; this command may name another (its own --data-dir)
        judges.load_judges_dir(Path(folder), configured_families(), lenient=True)
    except ReguaError as exc:
        typer.echo(f"error: REGUA_JUDGES_DIR: {exc}", err=True)
        raise typer.Exit(2) from exc


def register(app: typer.Typer) -> None:
    """Add ``regua judges`` to the main app."""
    app.add_typer(judges_app, name="judges")
