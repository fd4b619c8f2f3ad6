"""``regua labels export``: labels given in the review queue as a calibration label folder.

``regua labels export --out DIR [--task ID@VERSION] [--data-dir DIR]`` writes ``labels.csv``
(``file, criterion, status, annotator, time, evidence, role``) and each reviewed run's drawing
into DIR; ``regua calibrate --judge ID --set DIR`` then calibrates on them.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judges.calibration.labeltable import DEFAULT_TASK
from regua.settings import load_settings
from service.calibration.export import review_labels, write_label_folder
from service.storage import Database
from service.storage.blob_registry import open_blob_store
from service.tasks_store.configured import with_data_dir

labels_app = typer.Typer(help="Labels people gave in the review queue.", no_args_is_help=True)


@labels_app.command("export")
def export_command(
    out: Path = typer.Option(..., "--out", help="Folder to write labels.csv and drawings into"),
    task: str = typer.Option(DEFAULT_TASK, "--task", help="Task ID@VERSION of the runs"),
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Export the review queue's labels of one task as a label folder for calibration."""
    settings = with_data_dir(load_settings(), data_dir)
    db = Database(settings.resolved_database_url())
    try:
        with db.read() as s:
            exported = review_labels(s, open_blob_store(settings), task)
        table = write_label_folder(exported, out)
    finally:
        db.dispose()
    typer.echo(f"{len(exported.rows)} labels on {len(exported.files)} drawings written to {table}")


def register(app: typer.Typer) -> None:
    """Add ``regua labels`` to the main app."""
    app.add_typer(labels_app, name="labels")
