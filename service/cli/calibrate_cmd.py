"""``regua perturb`` and ``regua calibrate``: perturbation sets and judge calibration.

``regua perturb BASE.svg... --task ID@VERSION --out DIR [--seed N]`` writes single-factor
variants and ``manifest.jsonl``. ``regua calibrate --judge PROFILE --set SET`` runs a judge
profile over a calibration set (the bundled one by default, or a folder of drawings with a
``labels.csv``) through the real pipeline — sandboxed
render, then the judge on the frames and masks — computes the metrics on the held-out split and
prints (and optionally writes) the run with its gate decisions. Storage of runs in the database
is the service's job; this command writes JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

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
from regua.errors import InputError
from regua.settings import Settings, load_settings
from service.calibration.calibrate import CalibrationRequest, calibrate, store_run
from service.calibration.panel import PanelCalibrationRequest, calibrate_panel
from service.cli.calibrate_summary import summary_lines
from service.cli.panel_summary import panel_lines
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blob_registry import open_blob_store
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
) -> None:
    """Build single-factor variants of structured drawings, with a manifest line each."""
    if list_only:
        for spec in list_perturbations():
            typer.echo(f"{spec.id}@{spec.version}\t{spec.family}\t{spec.description}")
        return
    if not bases or out is None:
        raise InputError("give at least one BASE.svg and --out DIR")
    task_spec: TaskSpec = bundled_registry().get(task)
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


def should_store(store: bool | None, data_dir: Path | None) -> bool:
    """Whether to store the calibration run in the database.

    ``--store/--no-store`` wins; otherwise store when a data folder or database is configured
    (``--data-dir``, ``REGUA_DATA_DIR`` or ``REGUA_DATABASE_URL``).
    """
    if store is not None:
        return store
    return data_dir is not None or any(
        os.environ.get(k) for k in ("REGUA_DATA_DIR", "REGUA_DATABASE_URL")
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
        None, "--task", help="Task of a labels.csv folder (default pelican-bicycle-structured@1)"
    ),
    split: str = typer.Option("held_out", "--split", help="held_out (gate) | tuning | all"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="Judge each item this many times"),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed"),
    n_boot: int = typer.Option(1000, "--n-boot", min=100, help="Bootstrap resamples"),
    gate_file: Path = typer.Option(None, "--gate", help="Gate rule as JSON (GateConfig)"),
    out: Path = typer.Option(None, "--out", help="Write the run (JSON) here"),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON"),
    store: bool = typer.Option(
        None, "--store/--no-store", help="Store in the database (default: when one is configured)"
    ),
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Calibrate a judge profile on a labelled set and decide the reliability gate."""
    if split not in SPLIT_NAMES:
        raise InputError("--split must be held_out, tuning or all")
    if (judge is None) == (panel is None):
        raise InputError("give --judge PROFILE or --panel PANEL (one of them)")
    settings = load_settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    if panel is not None:
        request = PanelCalibrationRequest(panel, set_name, task, split, seed, n_boot)
        _panel(request, settings, should_store(store, data_dir), out, as_json)
        return
    keep = should_store(store, data_dir)
    db = Database(settings.resolved_database_url()) if keep else None
    renderer = RenderClient(settings)
    try:
        gate = (
            GateConfig.from_dict(_json(gate_file.read_text(encoding="utf-8")))
            if gate_file
            else None
        )
        request = CalibrationRequest(judge, set_name, split, repeats, seed, n_boot, gate, task)
        blobs = open_blob_store(settings) if db is not None else None
        run = calibrate(request, settings, renderer, db=db, blobs=blobs)
        if db is not None:  # the run and its gate decisions, for the jury to read
            typer.echo(f"stored calibration run {store_run(run, db)}", err=True)
    finally:
        renderer.close()
        if db is not None:
            db.dispose()
    _emit(run.to_dict(), out, as_json, lambda: summary_lines(run))


def _emit(
    data: dict[str, Any], out: Path | None, as_json: bool, lines: Callable[[], list[str]]
) -> None:
    """Write the report to ``out`` (JSON) and print it (JSON or its lines)."""
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(data, sort_keys=True))
    else:
        for line in lines():
            typer.echo(line)


def _panel(
    request: PanelCalibrationRequest,
    settings: Settings,
    with_db: bool,
    out: Path | None,
    as_json: bool,
) -> None:
    report = panel_report(request, settings, with_db)
    _emit(report.to_dict(), out, as_json, lambda: panel_lines(report))


def panel_report(
    request: PanelCalibrationRequest, settings: Settings, with_db: bool
) -> PanelAgreement:
    """Run the panel calibration with the database's gate (when there is one)."""
    db = Database(settings.resolved_database_url()) if with_db else None
    renderer = RenderClient(settings)
    try:
        blobs = open_blob_store(settings) if db is not None else None
        return calibrate_panel(request, settings, renderer, db=db, blobs=blobs)
    finally:
        renderer.close()
        if db is not None:
            db.dispose()


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("perturb")(perturb_command)
    app.command("calibrate")(calibrate_command)
