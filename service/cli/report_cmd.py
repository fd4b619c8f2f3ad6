"""``regua report``: write a report (HTML, CSV, JSON) of stored runs into a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from regua.errors import ReguaError
from regua.settings import Settings, load_settings
from service.tasks_store.configured import with_data_dir


def report(
    task: list[str] = typer.Option(
        [], "--task", help="ID@VERSION (one version) or ID (all versions); repeatable"
    ),
    out: Path = typer.Option(..., "--out", help="Folder to write the report into"),
    formats: list[str] = typer.Option(
        ["html", "csv", "json"], "--format", help="html | csv | json (repeatable; default all)"
    ),
    group_by: str = typer.Option("model", help="model | provider | model_provider"),
    model: list[str] = typer.Option([], "--model", help="Only these model labels; repeatable"),
    seed: int = typer.Option(20261129, help="Bootstrap seed (recorded in the report)"),
    resamples: int = typer.Option(1000, help="Bootstrap resamples"),
    weights: str = typer.Option("equal", help="Family weighting: equal | runs"),
    data_dir: Path | None = typer.Option(None, help="Data folder (REGUA_DATA_DIR)"),
    by: str = typer.Option(
        "family", "--by", help="Weighted section: family | dimension:NAME (slice by a dimension)"
    ),
    experiment: str | None = typer.Option(
        None, "--experiment", help="An experiment's paired report: NAME@WINDOW or NAME (newest)"
    ),
    gallery: bool = typer.Option(
        False, "--gallery", help="Write the drawings of one --task ID@VERSION as gallery.html"
    ),
    blind: bool = typer.Option(False, "--blind", help="With --gallery: blinded model labels"),
) -> None:
    """Compute the report of the stored runs and write it to OUT (report.html, CSVs, JSON).

    With ``--experiment`` it writes that experiment's paired report instead (experiment.html,
    experiment.json, history.json); with ``--gallery`` the drawings of one task version side by
    side (gallery.html and its images, animated drawings as animated PNGs).
    """
    from service.reports.build import ReportConfig
    from service.reports.db import generate_report
    from service.reports.exports import write_outputs
    from service.storage import Database

    settings = with_data_dir(load_settings(), data_dir)
    if experiment is not None or gallery:
        _not_statistics(settings, experiment, task, out, blind)
        return
    try:
        if weights not in ("equal", "runs"):
            raise typer.BadParameter("--weights must be equal or runs")
        cfg = ReportConfig(
            seed=seed, resamples=resamples, group_by=group_by, family_weights=weights, by=by
        )
        db = Database(settings.resolved_database_url())
        try:
            with db.read() as session:
                result, inputs = generate_report(session, task, cfg, models=model)
        finally:
            db.dispose()
        paths = write_outputs(result, out, formats, inputs.rows)
    except (ReguaError, ValueError) as exc:
        typer.echo(f"report: {exc}", err=True)
        raise typer.Exit(2) from exc
    _echo_report(result, paths)


def _echo_report(result: dict[str, Any], paths: list[Path]) -> None:
    """What the report covers, each group's pass range, the weighted rows and the files."""
    prov = result["provenance"]
    typer.echo(
        f"report of {prov['runs']} runs over {len(prov['task_versions'])} task version(s) "
        f"({', '.join(prov['task_versions'])}); seed {prov['seed']}"
    )
    for tv in result["task_versions"]:
        if tv.get("retired"):
            typer.echo(f"  {tv['task_ref']} is retired ({tv['retired']}); its runs stay readable")
        for g in tv["groups"]:
            typer.echo(f"  {tv['task_ref']}  {g['model']}: pass rate {g['pass_range']['text']}")
    _echo_weighted(result["weighted"])
    from service.reports.revisions import summary_lines

    revised = summary_lines(result.get("revisions") or {})
    if revised:
        typer.echo("render-and-revise (never pooled with first answers, never ranked):")
        for line in revised:
            typer.echo(line)
    for path in paths:
        typer.echo(f"wrote {path}")


def _echo_weighted(view: dict[str, Any]) -> None:
    """One line per row of the weighted section and per overall figure, with its versions."""
    from service.reports.stats import format_pct

    typer.echo(
        f"weighted by {view['by']} (each family equal, each task version equal within it; "
        "every version counted on its own, a model's figures from its own runs only):"
    )
    overall = [{**r, "value": "all, family-weighted"} for r in view.get("overall", [])]
    for row in [*view["rows"], *overall]:
        versions = ", ".join(f"{v['task_ref']} {v['runs']} runs" for v in row.get("versions", []))
        typer.echo(
            f"  {row['pool']}  {row['model']}  {row['value']}: pass rate "
            f"{format_pct(row['lower'])} to {format_pct(row['upper'])}, decided "
            f"{format_pct(row['decided_rate'])} (weighs {versions})"
        )


def _experiment_report(settings: Settings, ident: str, out: Path) -> None:
    from service.experiments.exports import summary_lines, write_experiment_report
    from service.storage import Database

    db = Database(settings.resolved_database_url())
    try:
        result, paths = write_experiment_report(db, ident, out)
    except ReguaError as exc:
        typer.echo(f"report: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        db.dispose()
    for line in summary_lines(result):
        typer.echo(line)
    for path in paths:
        typer.echo(f"wrote {path}")


def _not_statistics(
    settings: Settings, experiment: str | None, task: list[str], out: Path, blind: bool
) -> None:
    """``--experiment`` (its paired report) or ``--gallery`` (the drawings)."""
    if experiment is not None:
        _experiment_report(settings, experiment, out)
    else:
        _gallery(settings, task, out, blind)


def _gallery(settings: Settings, task: list[str], out: Path, blind: bool) -> None:
    """``--gallery``: the drawings of one task version as files in ``out``."""
    from service.storage import Database
    from service.storage.blob_registry import open_blob_store
    from service.web.gallery_export import write_gallery

    if len(task) != 1 or "@" not in task[0]:
        typer.echo("report: --gallery takes exactly one --task ID@VERSION", err=True)
        raise typer.Exit(2)
    db = Database(settings.resolved_database_url())
    try:
        with db.read() as session:
            path = write_gallery(session, open_blob_store(settings), task[0], out, blind=blind)
    except ReguaError as exc:
        typer.echo(f"report: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        db.dispose()
    typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    """Add ``regua report`` to the main app."""
    app.command("report")(report)
