"""``regua judges propose``: candidate judges for one criterion, calibrated and seated in one go.

Writes N candidate profiles (strict, balanced, lenient, rubric wording of a vision judge) into
the judges folder, calibrates each on a label folder's items of the criterion, prints the
comparison, and writes a new panel version holding the base panel's judges plus the candidates
the gate trusts. Exit 0 when at least one candidate earned a vote, 1 when none did (no panel
written), 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from judges.calibration.gate import GateConfig
from regua.settings import Settings, load_settings
from service.calibration.candidates import Calibrated, Proposed, ProposeJudges, propose_judges
from service.cli.calibrate_cmd import StoreOption, where_stored
from service.cli.calibrate_summary import STATUS_WORDS, est
from service.cli.judges_cmd import _folder, judges_app
from service.cli.options import AsJson
from service.pipeline.render_client import RenderClient
from service.storage import Database
from service.storage.blob_registry import open_blob_store
from service.tasks_store import StoredTaskRegistry
from service.tasks_store.configured import configured_tasks, with_data_dir
from tasks import bundled_registry

N_HELP = "How many wordings, in this order: strict, balanced, lenient, rubric"
PANEL_HELP = "The panel to extend (default: REGUA_PANEL when it fits the task, else the task's)"


def _row(c: Calibrated) -> str:
    d = c.decision
    m: dict[str, Any] = dict(d.metrics) if d is not None else {}
    status = STATUS_WORDS.get(str(d.status), "no decision") if d is not None else "no decision"
    figures = {k: est(m.get(k) or {}) for k in ("macro_f1", "kappa", "missed_critical")}
    rejects = est(m.get("false_reject") or {})
    return (
        f"{c.candidate.doc.id:<44} {c.candidate.stance:<9} {status:<13} "
        f"macro-F1 {figures['macro_f1']:<26} kappa {figures['kappa']:<26} "
        f"missed critical {figures['missed_critical']:<24} false rejects {rejects}"
    )


def _echo(out: Proposed, criterion: str) -> None:
    typer.echo(f"candidates for {criterion} (base panel {out.base_panel.id}):")
    for c in out.calibrated:
        typer.echo("  " + _row(c))
        if c.decision is not None and not c.trusted:
            for reason in c.decision.reasons[:3]:
                typer.echo(f"      {reason}")
    if out.panel is None:
        typer.echo(f"no candidate earned a vote on {criterion}; no panel written")
    else:
        seated = ", ".join(out.panel.profiles_for(criterion))
        typer.echo(f"new panel {out.panel.id} (family {out.panel.family}): {criterion}: {seated}")
    for path in out.files:
        typer.echo(f"wrote {path}")


def _as_json(out: Proposed) -> str:
    return json.dumps(
        {
            "base_panel": out.base_panel.id,
            "panel": out.panel.to_dict() if out.panel else None,
            "files": [str(p) for p in out.files],
            "candidates": [
                {
                    "id": c.candidate.doc.id,
                    "wording": c.candidate.stance,
                    "content_hash": c.candidate.profile.content_hash(),
                    "calibration_run": c.run.run_id,
                    "decision": c.decision.to_dict() if c.decision else None,
                }
                for c in out.calibrated
            ],
        },
        sort_keys=True,
    )


@judges_app.command("propose")
def propose_command(
    task: str = typer.Option(..., "--task", help="Task ID@VERSION (bundled or added)"),
    criterion: str = typer.Option(..., "--criterion", help="The criterion id, e.g. R2"),
    n: int = typer.Option(
        3, "--n", min=1, max=4, help="Wordings: strict, balanced, lenient, rubric"
    ),
    labels: str = typer.Option(..., "--labels", help="Label folder (drawings + labels.csv)"),
    base: str = typer.Option("vision-llm-openai@1", "--base", help="The vision profile to vary"),
    prefix: str | None = typer.Option(None, "--prefix", help="Candidate ids: PREFIX-WORDING@k"),
    panel: str | None = typer.Option(
        None, "--panel", help="Panel to extend (default: REGUA_PANEL, else the task's)"
    ),
    split: str = typer.Option("all", "--split", help="all | held_out | tuning"),
    repeats: int = typer.Option(2, "--repeats", min=1, help="Judge each item this many times"),
    seed: int = typer.Option(0, "--seed"),
    n_boot: int = typer.Option(1000, "--n-boot", min=100),
    gate_file: Path | None = typer.Option(None, "--gate", help="Gate rule as JSON (GateConfig)"),
    folder: Path | None = typer.Option(None, "--dir", help="Judges folder (REGUA_JUDGES_DIR)"),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
    store: bool = StoreOption,
    as_json: bool = AsJson,
) -> None:
    """Write candidate judges for a criterion, calibrate them, seat the trusted in a new panel.

    The calibrations are stored in the data folder ``regua serve`` uses (``--data-dir``,
    ``REGUA_DATA_DIR``, default ``data``) unless ``--no-store``, as ``regua calibrate`` does.
    """
    target = _folder(folder)
    settings = with_data_dir(load_settings(), data_dir)
    gate = (
        GateConfig.from_dict(json.loads(gate_file.read_text(encoding="utf-8")))
        if gate_file
        else None
    )
    request = ProposeJudges(
        task, criterion, n, labels, base, prefix, panel, split, repeats, seed, n_boot, gate
    )
    out = _propose(request, settings, target, store=store)
    if as_json:
        typer.echo(_as_json(out))
    else:
        _echo(out, criterion)
    typer.echo(_stored_line(out, settings, store), err=as_json)
    if out.panel is None:
        raise typer.Exit(1)


def _propose(request: ProposeJudges, settings: Settings, target: Path, *, store: bool) -> Proposed:
    """Propose, calibrate and (with ``store``) keep the runs in the settings' data folder."""
    db = Database(settings.resolved_database_url()) if store else None
    renderer = RenderClient(settings)
    try:
        blobs = open_blob_store(settings) if db is not None else None
        with configured_tasks(settings) as tasks:
            registry = StoredTaskRegistry(db, bundled_registry()) if db is not None else tasks
            return propose_judges(
                request, settings, renderer, target, db=db, blobs=blobs, registry=registry
            )
    finally:
        renderer.close()
        if db is not None:
            db.dispose()


def _stored_line(out: Proposed, settings: Settings, store: bool) -> str:
    if not store:
        return "measured only (--no-store): no calibration was stored, no candidate gains a vote"
    return (
        f"stored {len(out.calibrated)} calibration run(s) and their gate decisions in "
        f"{where_stored(settings)}"
    )


def register(app: typer.Typer) -> None:
    """The command is on ``regua judges`` (registered by :mod:`service.cli.judges_cmd`)."""
    del app
