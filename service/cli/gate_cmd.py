"""``regua gate show`` and ``regua gate history JUDGE``: the reliability gate of a data folder.

``show`` prints the latest decision per judge, criterion and family (what the jury reads);
``history`` every decision of one judge over time, per family and criterion, with the set and
its size each was measured on, so a demotion and what it replaced stay visible. Both read the
database of ``--data-dir`` (``REGUA_DATA_DIR`` / ``REGUA_DATABASE_URL``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import typer

from regua.errors import NotFoundError
from regua.settings import load_settings
from regua.views.calibrations import GateDecisionView
from service.calibration.store import gate_history, gate_view, judge_matches
from service.cli.options import AsJson
from service.storage import Database
from service.tasks_store.configured import configured_database_exists, with_data_dir

gate_app = typer.Typer(help="The reliability gate: who votes on what, and since when.")
DataDir = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR, default 'data')")
Family = typer.Option(None, "--family", help="Only this task family")


def _read(
    data_dir: Path | None, judge: str | None, family: str | None, history: bool
) -> list[GateDecisionView]:
    settings = with_data_dir(load_settings(), data_dir)
    if not configured_database_exists(settings):
        raise NotFoundError(
            f"no database at {settings.resolved_database_url()}: nothing was calibrated there "
            "(regua calibrate --data-dir DIR stores its decisions in DIR)"
        )
    db = Database(settings.resolved_database_url())
    try:
        with db.read() as s:
            if history:
                return gate_history(s, judge, family)
            return [
                d
                for d in gate_view(s)
                if (judge is None or judge_matches(d.profile_id, judge))
                and (family is None or d.task_family == family)
            ]
    finally:
        db.dispose()


def _line(d: GateDecisionView) -> str:
    size = "size unknown" if d.set_size is None else f"{d.set_size} labelled"
    why = f" — {'; '.join(d.reasons)}" if d.reasons else ""
    return f"    {d.decided_at}  {d.status:<12} set {d.set_id} ({size}), run {d.run_id}{why}"


def _print(decisions: list[GateDecisionView], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps([d.model_dump(mode="json") for d in decisions], indent=1))
        return

    def key(d: GateDecisionView) -> tuple[str, str, str]:
        return d.profile_id, d.task_family, d.criterion

    for (profile, family, criterion), group in itertools.groupby(decisions, key=key):
        typer.echo(f"{profile}  family {family}  criterion {criterion}")
        for d in group:
            typer.echo(_line(d))


@gate_app.command("history")
def history_command(
    judge: str = typer.Argument(..., help="Judge profile id (or the id it votes under)"),
    family: str | None = Family,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
) -> None:
    """Every gate decision of JUDGE over time, per family and criterion (oldest first)."""
    decisions = _read(data_dir, judge, family, history=True)
    if not decisions and not as_json:
        typer.echo(f"no gate decision for {judge}" + (f" on family {family}" if family else ""))
        raise typer.Exit(1)
    _print(decisions, as_json)


@gate_app.command("show")
def show_command(
    judge: str | None = typer.Option(None, "--judge", help="Only this judge"),
    family: str | None = Family,
    as_json: bool = AsJson,
    data_dir: Path | None = DataDir,
) -> None:
    """The latest decision per judge, criterion and family: what the jury reads now."""
    _print(_read(data_dir, judge, family, history=False), as_json)


def register(app: typer.Typer) -> None:
    """Add ``regua gate`` to the main app."""
    app.add_typer(gate_app, name="gate")
