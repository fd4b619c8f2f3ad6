"""``regua pairwise run | import | calibrate | report``: pairwise judging and its ranking.

``run`` compares stored runs of a task on one criterion with a pairwise judge (the vision model
of ``REGUA_JUDGE_BASE_URL`` / ``REGUA_JUDGE_MODEL``), asked in both orders; ``import`` stores
human preferences from a CSV; ``calibrate`` judges the preferences' drawings (rendered in the
sandbox) to measure the judge against people; ``report`` prints the Bradley-Terry ranking, the
confrontation matrix and the judge's agreement with the imported preferences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.progress import Progress

from judges.pairwise import pairwise_registry
from regua.settings import Settings, load_settings
from service.pairwise.calibrate import calibrate_preferences
from service.pairwise.compare import PairRequest, run_pairs
from service.pairwise.importer import import_preferences
from service.pairwise.ranking import (
    RankingQuery,
    agreement_lines,
    calibration_line,
    pairwise_ranking,
    table_lines,
)
from service.pairwise.store import preference_keys, ranking_keys
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blobs import LocalBlobStore
from service.tasks_store import StoredTaskRegistry
from service.tasks_store.configured import with_data_dir
from tasks import bundled_registry

pairwise_app = typer.Typer(
    help="Compare drawings two at a time (both orders) and rank models by Bradley-Terry.",
    no_args_is_help=True,
)
DataDir = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)")


def _settings(data_dir: Path | None) -> Settings:
    settings = with_data_dir(load_settings(), data_dir)
    return settings


@pairwise_app.command("run")
def run_command(
    task: str = typer.Option(..., "--task", help="Task version of the runs (ID@VERSION)"),
    criterion: str = typer.Option(..., "--criterion", help="Criterion id, e.g. C2"),
    runs: list[str] = typer.Option([], "--runs", help="Run id (repeatable)"),
    models: list[str] = typer.Option([], "--models", help="Model label (repeatable)"),
    judge: str = typer.Option("vision-llm", "--judge", help="Pairwise judge kind"),
    data_dir: Path | None = DataDir,
) -> None:
    """Judge pairs of stored runs on one criterion, in both orders, and store the comparisons."""
    settings = _settings(data_dir)
    db = Database(settings.resolved_database_url())
    try:
        pair_judge = pairwise_registry().create(judge, settings)
        blobs = LocalBlobStore(settings.resolved_artifact_dir())
        req = PairRequest(task, criterion, tuple(runs), tuple(models))
        with Progress(transient=True) as bar:
            job = bar.add_task("comparing pairs", total=None)
            report = run_pairs(
                db, blobs, pair_judge, req, lambda d, n: bar.update(job, completed=d, total=n)
            )
    finally:
        db.dispose()
    typer.echo(
        f"{report.compared} comparison(s) stored by {pair_judge.judge_id}: "
        f"{report.position_biased} position-biased (recorded as ties), "
        f"{report.failures} judge failure(s)"
    )
    if report.failures:
        typer.echo("judge failures carry no verdict; see `regua pairwise report`", err=True)


@pairwise_app.command("import")
def import_command(
    file: Path = typer.Argument(..., help="CSV with columns left,right,winner,annotator"),
    task: str = typer.Option(None, "--task", help="Task version the preferences are about"),
    criterion: str = typer.Option(None, "--criterion", help="Criterion they are about"),
    data_dir: Path | None = DataDir,
) -> None:
    """Import human pairwise preferences (all rows or none) to calibrate pairwise judges."""
    settings = _settings(data_dir)
    db = Database(settings.resolved_database_url())
    try:
        blobs = LocalBlobStore(settings.resolved_artifact_dir())
        done = import_preferences(db, blobs, file, task_ref=task, criterion=criterion)
    finally:
        db.dispose()
    typer.echo(
        f"imported {done.stored} preference(s) from {file}"
        + (f"; {done.unchanged} already stored, unchanged" if done.unchanged else "")
    )


@pairwise_app.command("report")
def report_command(
    task: str = typer.Option(None, "--task", help="Only comparisons of this task version"),
    criterion: str = typer.Option(None, "--criterion", help="Only this criterion"),
    judge: str = typer.Option(None, "--judge", help="Only this judge identity"),
    source: str = typer.Option("judges", "--source", help="judges (one ranking each) | people"),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    resamples: int = typer.Option(500, "--resamples", min=50, help="Bootstrap resamples"),
    as_json: bool = typer.Option(False, "--json", help="Print the ranking as JSON"),
    data_dir: Path | None = DataDir,
) -> None:
    """Print per task version, criterion and source (a judge, or people) ranking and matrix."""
    settings = _settings(data_dir)
    db = Database(settings.resolved_database_url())
    n = settings.pairwise_min_comparisons
    try:
        keys: list[tuple[str | None, str | None, str | None]]
        if source == "people":
            keys = [
                (t, c, None)
                for t, c in preference_keys(db)
                if (not task or t in (None, task)) and (not criterion or c in (None, criterion))
            ]
            if task or criterion:
                keys = [(task, criterion, None)]
        elif source == "judges":
            keys = [
                (t, c, j)
                for t, c, j in ranking_keys(db)
                if (not task or t == task)
                and (not criterion or c == criterion)
                and (not judge or j == judge)
            ]
        else:
            raise typer.BadParameter("--source must be judges or people")
        docs = [
            pairwise_ranking(db, RankingQuery(t, c, n, resamples, seed, judge=j, source=source))
            for t, c, j in keys
        ]
    finally:
        db.dispose()
    _print_rankings(docs, as_json)


def _print_rankings(docs: list[dict[str, Any]], as_json: bool) -> None:
    """The rankings as JSON, or as tables with the calibration or the agreement lines."""
    if as_json:
        typer.echo(json.dumps(docs, sort_keys=True))
        return
    if not any(d["comparisons"] for d in docs):
        typer.echo(
            "nothing to rank yet: run `regua pairwise run` (judges) or import preferences "
            "with model columns or of stored runs' drawings (people)"
        )
        return
    for doc in docs:
        who = doc["judge"] if doc["source"] == "judges" else "people's preferences"
        typer.echo(f"{doc['task_ref'] or '(any task)'} · criterion {doc['criterion'] or '(any)'}")
        typer.echo(f"  ranked by {who}")
        for line in table_lines(doc):
            typer.echo("  " + line)
        if doc["source"] == "people":
            counts = doc["preferences"]
            typer.echo(
                f"  {counts['ranked']} of {counts['imported']} preference(s) ranked; "
                f"{counts['unmapped']} without a known model, "
                f"{counts['same_model']} within one model"
            )
            for line in agreement_lines(doc):
                typer.echo("  " + line)
        else:
            typer.echo("  " + calibration_line(doc))


@pairwise_app.command("calibrate")
def calibrate_command(
    task: str = typer.Option(..., "--task", help="Task version (ID@VERSION)"),
    criterion: str = typer.Option(..., "--criterion", help="Criterion id, e.g. B1"),
    judge: str = typer.Option("vision-llm", "--judge", help="Pairwise judge kind"),
    data_dir: Path | None = DataDir,
) -> None:
    """Judge the imported human preferences' drawings (rendered in the sandbox) in both orders."""
    settings = _settings(data_dir)
    db = Database(settings.resolved_database_url())
    renderer = RenderClient(settings)
    try:
        spec = StoredTaskRegistry(db, bundled_registry()).get(task)  # bundled or added
        pair_judge = pairwise_registry().create(judge, settings)
        blobs = LocalBlobStore(settings.resolved_artifact_dir())
        with Progress(transient=True) as bar:
            job = bar.add_task("rendering and judging", total=None)
            calibrate_preferences(
                db,
                blobs,
                renderer,
                pair_judge,
                (spec, criterion),
                lambda d, n: bar.update(job, completed=d, total=n),
            )
        q = RankingQuery(task, criterion, resamples=50, judge=pair_judge.judge_id)
        doc = pairwise_ranking(db, q)
    finally:
        renderer.close()
        db.dispose()
    typer.echo(f"{pair_judge.judge_id} on {task} {criterion}: " + calibration_line(doc))


def register(app: typer.Typer) -> None:
    """Add ``regua pairwise`` to the main app."""
    app.add_typer(pairwise_app, name="pairwise")
