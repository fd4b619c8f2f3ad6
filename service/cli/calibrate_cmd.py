"""``regua perturb`` and ``regua calibrate``: perturbation sets and judge calibration.

``regua perturb BASE.svg... --task ID@VERSION --out DIR [--seed N]`` writes single-factor
variants and ``manifest.jsonl``. ``regua calibrate --judge PROFILE --set SET`` runs a judge
profile over a calibration set (the bundled one by default, or a folder of drawings with a
``labels.csv``) through the real pipeline — sandboxed
render, then the judge on the frames and masks — computes the metrics on the held-out split,
prints the run with its gate decisions and stores them in the data folder ``regua serve`` uses
(``--data-dir``, ``REGUA_DATA_DIR``, default ``data``), ending with the line that says where and
since when the judge votes. ``--no-store`` only measures, and says so. A decision that would
demote a trusted judge on a smaller set is refused (exit 1) unless ``--replace``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from sqlalchemy.engine import make_url

from judges.calibration import CalibrationRun
from judges.calibration.gate import GateConfig
from judges.calibration.panel_agreement import PanelAgreement
from judges.calibration.runner import SPLIT_NAMES
from judges.perturbation.generate import (
    Recipe,
    default_recipes,
    list_perturbations,
    manifest_jsonl,
    perturb_many,
)
from regua.errors import GateDemotionError, InputError
from regua.settings import Settings, load_settings
from regua.views.calibrations import CalibrationView
from service.calibration.calibrate import CalibrationRequest, calibrate, store_run
from service.calibration.panel import PanelCalibrationRequest, calibrate_panel
from service.calibration.store import calibration_view
from service.cli.calibrate_summary import summary_lines
from service.cli.panel_summary import panel_lines
from service.cli.task_ref import TaskDataDir, resolve_task
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blob_registry import open_blob_store
from service.tasks_store import StoredTaskRegistry
from service.tasks_store.configured import configured_tasks, with_data_dir
from tasks import TaskSpec, bundled_registry


def _json(text: str) -> Any:
    """JSON text given on the command line or in a file (bad JSON is bad input)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(exc)) from exc


def perturb_command(
    bases: list[Path] = typer.Argument(None, help="Structured base drawings (SVG files)"),
    task: str = typer.Option("pelican-bicycle-structured@1", "--task", help="Task ID@VERSION"),
    out: Path = typer.Option(None, "--out", help="Output directory (variants + manifest.jsonl)"),
    seed: int = typer.Option(0, "--seed", help="Seed (same seed, same bytes)"),
    perturbation: list[str] = typer.Option(
        None, "--perturbation", "-p", help="Perturbation id (repeatable; default: the battery)"
    ),
    params: str = typer.Option(
        None,
        "--params",
        help="JSON parameters for every --perturbation, e.g. '{\"fraction\": 0.1}'",
    ),
    list_only: bool = typer.Option(False, "--list", help="List the perturbations and exit"),
    data_dir: Path | None = TaskDataDir,
) -> None:
    """Build single-factor variants of structured drawings, with a manifest line each."""
    if list_only:
        for spec in list_perturbations():
            typer.echo(f"{spec.id}@{spec.version}\t{spec.family}\t{spec.description}")
        return
    if not bases or out is None:
        raise InputError("give at least one BASE.svg and --out DIR")
    task_spec: TaskSpec = resolve_task(task, data_dir)
    extra = _json(params) if params else {}
    recipes = [Recipe(p, extra) for p in perturbation] if perturbation else list(default_recipes())
    sources = [(p.stem, p.read_bytes()) for p in bases]
    variants, skipped = perturb_many(sources, recipes, task=task_spec, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    for v in variants:
        (out / v.file_name).write_bytes(v.svg)
    (out / "manifest.jsonl").write_text(manifest_jsonl(variants), encoding="utf-8")
    for note in skipped:
        typer.echo(f"skipped {note['perturbation']} on {note['base']}: {note['reason']}", err=True)
    typer.echo(f"{len(variants)} variants written to {out} (manifest.jsonl)")


StoreOption = typer.Option(
    True,
    "--store/--no-store",
    help="Store the run and its gate decisions in the data folder (--no-store: measure only)",
)
ReplaceOption = typer.Option(
    False, "--replace", help="Store even where a smaller set demotes a trusted judge"
)
CalibrationDataDir = typer.Option(
    None, "--data-dir", help="Data folder (REGUA_DATA_DIR, default 'data': as regua serve)"
)


def calibrate_command(
    judge: str = typer.Option(None, "--judge", help="Judge profile id (NAME@VERSION)"),
    panel: str = typer.Option(
        None,
        "--panel",
        help="Calibrate a whole panel instead (its adjudicator included): the panel's verdicts, "
        "each judge alone and how often the adjudicator agreed with the majority and the label",
    ),
    set_name: str = typer.Option(
        "bundled",
        "--set",
        help="'bundled', a .jsonl set, a set folder, or a folder of drawings with labels.csv "
        "(columns file,criterion,status,annotator[,time,evidence])",
    ),
    task: str = typer.Option(
        None,
        "--task",
        help="Task of a labels.csv folder, bundled or added (default pelican-bicycle-structured@1)",
    ),
    split: str = typer.Option("held_out", "--split", help="held_out (gate) | tuning | all"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="Judge each item this many times"),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    n_boot: int = typer.Option(1000, "--n-boot", min=100, help="Bootstrap resamples"),
    gate_file: Path = typer.Option(None, "--gate", help="Gate rule as JSON (GateConfig)"),
    out: Path = typer.Option(None, "--out", help="Write the run (JSON) here"),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON"),
    store: bool = StoreOption,
    replace: bool = ReplaceOption,
    data_dir: Path = CalibrationDataDir,
) -> None:
    """Calibrate a judge profile on a labelled set, decide the gate and store the decisions.

    The decisions go to the same data folder ``regua serve`` uses (``--data-dir``,
    ``REGUA_DATA_DIR``, default ``data``); the last line says where, and since when the judge
    votes. ``--no-store`` only measures (and says so).
    """
    if split not in SPLIT_NAMES:
        raise InputError("--split must be held_out, tuning or all")
    if (judge is None) == (panel is None):
        raise InputError("give --judge PROFILE or --panel PANEL (one of them)")
    settings = with_data_dir(load_settings(), data_dir)
    if panel is not None:
        request_panel = PanelCalibrationRequest(panel, set_name, task, split, seed, n_boot)
        _panel(request_panel, settings, store, out, as_json)
        return
    gate = GateConfig.from_dict(_json(gate_file.read_text(encoding="utf-8"))) if gate_file else None
    request = CalibrationRequest(
        judge, set_name, split, repeats, seed, n_boot, gate, task, replace=replace
    )
    if store:
        run, stored = _measure_and_store(request, settings, as_json)
    else:
        run = _measure(request, settings)
        stored = (
            f"measured only (--no-store): nothing was stored, so {run.profile_id} gains no vote; "
            "run it without --no-store to store the decisions"
        )
    _print_run(run, out, as_json)
    typer.echo(stored, err=as_json)


def _print_run(run: CalibrationRun, out: Path | None, as_json: bool) -> None:
    """Write the run to ``out`` (if given); print it as JSON or as the summary lines."""
    _emit(run.to_dict(), summary_lines(run), out, as_json)


def _emit(data: dict[str, Any], lines: Iterable[str], out: Path | None, as_json: bool) -> None:
    """Write ``data`` to ``out`` (if given) as indented JSON; print it as JSON or as ``lines``."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(data, sort_keys=True))
    else:
        for line in lines:
            typer.echo(line)


def _measure(request: CalibrationRequest, settings: Settings) -> CalibrationRun:
    """Calibrate without a database of its own (renders are not kept)."""
    renderer = RenderClient(settings)
    try:
        with configured_tasks(settings) as registry:
            return calibrate(request, settings, renderer, registry=registry)
    finally:
        renderer.close()


def _measure_and_store(
    request: CalibrationRequest, settings: Settings, as_json: bool
) -> tuple[CalibrationRun, str]:
    """Calibrate on the data folder (renders kept there) and store; the run and the last line.

    A refused demotion prints the measurement, then the refusal, and exits 1.
    """
    db = Database(settings.resolved_database_url())
    renderer = RenderClient(settings)
    try:
        registry = StoredTaskRegistry(db, bundled_registry())
        blobs = open_blob_store(settings)
        run = calibrate(request, settings, renderer, db=db, blobs=blobs, registry=registry)
        try:
            store_run(run, db, replace=request.replace)
        except GateDemotionError as exc:
            if not as_json:
                for line in summary_lines(run):
                    typer.echo(line)
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        with db.read() as s:
            stored = calibration_view(s, run.run_id)
    finally:
        renderer.close()
        db.dispose()
    return run, stored_line(stored, settings)


def stored_line(view: CalibrationView, settings: Settings) -> str:
    """Where the decisions were stored, and since when the judge votes (and where not)."""
    where = where_stored(settings)
    trusted = [d.criterion for d in view.decisions if d.status == "trusted"]
    others = [f"{d.criterion} {d.status}" for d in view.decisions if d.status != "trusted"]
    family = view.decisions[0].task_family if view.decisions else "?"
    since = view.decisions[0].decided_at if view.decisions else "now"
    votes = (
        f"{view.profile_id} votes on {', '.join(trusted)} of family {family} since {since}"
        if trusted
        else f"{view.profile_id} votes on no criterion of family {family}"
    )
    rest = f" (not on: {', '.join(others)})" if others else ""
    return (
        f"stored calibration run {view.id} and its gate decisions in {where}: {votes}{rest}; "
        f"a service on this data folder (regua serve --data-dir {settings.data_dir.resolve()}) "
        "seats it"
    )


def where_stored(settings: Settings) -> str:
    """The database of ``settings`` as a person reads it (a file path; a URL without password)."""
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return str((settings.data_dir / "regua.sqlite3").resolve())


def _panel(
    request: PanelCalibrationRequest,
    settings: Settings,
    with_db: bool,
    out: Path | None,
    as_json: bool,
) -> None:
    """``--panel``: measure the panel and print (and write) its report; nothing is stored."""
    report = panel_report(request, settings, with_db)
    _emit(report.to_dict(), panel_lines(report), out, as_json)


def panel_report(
    request: PanelCalibrationRequest, settings: Settings, with_db: bool
) -> PanelAgreement:
    """Run the panel calibration with the database's gate (when there is one)."""
    db = Database(settings.resolved_database_url()) if with_db else None
    renderer = RenderClient(settings)
    try:
        if db is None:
            with configured_tasks(settings) as registry:
                return calibrate_panel(request, settings, renderer, registry=registry)
        tasks = StoredTaskRegistry(db, bundled_registry())
        blobs = open_blob_store(settings)
        return calibrate_panel(request, settings, renderer, db=db, blobs=blobs, registry=tasks)
    finally:
        renderer.close()
        if db is not None:
            db.dispose()


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("perturb")(perturb_command)
    app.command("calibrate")(calibrate_command)
