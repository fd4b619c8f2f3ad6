"""``regua export`` and ``regua import bundle``: runs and their evidence between installations.

``regua export --task REF [--model M …] --out FILE`` writes a bundle (:mod:`service.bundles`)
of the stored runs of REF (``ID@VERSION``, or ``ID`` for every version) from the data folder;
``regua import bundle FILE`` restores one into the configured database and artifact store.
The command line reads the database as an admin would; a reserved task still leaves only with
``--include-reserved``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from regua.settings import Settings, load_settings
from service.tasks_store.configured import with_data_dir

import_app = typer.Typer(help="Import into this installation.", no_args_is_help=True)

LOCAL_ADMIN = ("regua export", "admin")


def _settings(data_dir: Path | None) -> Settings:
    settings = with_data_dir(load_settings(), data_dir)
    return settings


def export_command(
    task: list[str] = typer.Option(..., "--task", help="ID@VERSION or ID; repeatable"),
    out: Path = typer.Option(..., "--out", help="Bundle file (.tar.gz, .tgz, .tar.xz, .tar)"),
    model: list[str] = typer.Option([], "--model", help="Only these model labels; repeatable"),
    include_reserved: bool = typer.Option(
        False, "--include-reserved", help="Export a reserved task's prompt and drawings too"
    ),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Write the runs of a task with every evaluation, review and artifact to one file."""
    from service.access.tokens import Principal
    from service.bundles.export import export_bundle
    from service.storage import Database
    from service.storage.blob_registry import open_blob_store

    settings = _settings(data_dir)
    db = Database(settings.resolved_database_url())
    who = Principal(token_id=0, name=LOCAL_ADMIN[0], role=LOCAL_ADMIN[1])
    try:
        with db.read() as s:
            data, counts = export_bundle(
                s,
                open_blob_store(settings),
                who,
                task,
                models=model,
                include_reserved=include_reserved,
                name=out.name,
            )
    finally:
        db.dispose()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(out)
    rows = counts["rows"]
    typer.echo(
        f"exported {counts['runs']} runs ({rows['evaluations']} evaluations, "
        f"{rows['artifacts']} artifacts, {rows['reviews']} reviews, "
        f"{rows['gate_decisions']} gate decisions) to {out} ({len(data)} bytes)"
    )


@import_app.command("bundle")
def import_bundle(
    file: Path = typer.Argument(..., help="A bundle written by regua export"),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Verify a bundle's every hash and restore its runs here (idempotent)."""
    from service.bundles.archive import unpack
    from service.bundles.restore import restore
    from service.context import ServiceContext

    contents = unpack(file.read_bytes())
    ctx = ServiceContext.open(_settings(data_dir))
    try:
        result = restore(ctx.db, ctx.blobs, ctx.registry, contents)
    finally:
        ctx.close()
    typer.echo(
        f"imported {len(result.runs)} runs ({len(result.already)} already here), "
        f"{result.rows.get('evaluations', 0)} evaluations, {result.artifacts_stored} artifacts "
        f"stored; every hash verified"
    )
    for ref in result.tasks_registered:
        typer.echo(f"registered task {ref}")


def register(app: typer.Typer) -> None:
    """Add ``regua export`` and ``regua import bundle``."""
    app.command("export")(export_command)
    app.add_typer(import_app, name="import")
