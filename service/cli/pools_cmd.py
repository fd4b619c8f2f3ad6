"""``regua tasks retire ID@VERSION`` (rotation) and ``regua tasks bank FILE`` (bank versions).

Retiring writes straight to the service's database (``--data-dir`` or ``REGUA_DATABASE_URL``),
as ``regua token`` does; the running service reads it on the next request. Any registered
version can be retired: bundled, or added to that database's task store.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import typer

from regua.errors import TaskError, read_text
from regua.settings import load_settings
from service.access.pools import retire_task
from service.access.secret import open_database
from service.storage import iso
from service.tasks_store import StoredTaskRegistry
from service.tasks_store.configured import with_data_dir
from tasks import bundled_registry
from tasks.bank import Bank, check_banks, load_bank_text, shared_anchors


def retire(
    ref: str = typer.Argument(..., help="The task version to retire, ID@VERSION"),
    note: str = typer.Option("", help="Why it is retired (kept with the retirement)"),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)"),
) -> None:
    """Retire a task version: rotated out of the bank; a reserved prompt may now be published."""
    settings = with_data_dir(load_settings(), data_dir)
    db = open_database(settings)
    try:
        spec = StoredTaskRegistry(db, bundled_registry()).get(ref)  # bundled or added
        with db.write() as s:
            row = retire_task(s, spec.ref, "cli", note)
            when = iso(row.retired_at)
    finally:
        db.dispose()
    typer.echo(f"{spec.ref} retired at {when} (pool {spec.pool.value})")


def _read_bank(path: Path) -> Bank:
    return load_bank_text(read_text(path, TaskError), str(path))


def _consecutive(banks: list[Bank]) -> list[tuple[Bank, Bank]]:
    ordered = sorted(banks, key=lambda b: (b.id, b.version))
    return [(a, b) for a, b in itertools.pairwise(ordered) if a.id == b.id]


def bank(
    files: list[Path] = typer.Argument(..., help="Bank files (YAML), any order"),
) -> None:
    """Check bank versions: every consecutive pair shares the anchors the newer one declares.

    Prints the anchors of each pair as ``--task`` options: a report over those task versions
    (``regua report --task …``) compares the two bank versions on the anchors only.
    """
    banks = [_read_bank(f) for f in files]
    problems = check_banks(banks)
    for b in banks:
        typer.echo(f"{b.id} v{b.version}: {len(b.items)} items, {len(b.anchors)} anchors")
    if problems:
        for p in problems:
            typer.echo(f"error: {p}", err=True)
        raise typer.Exit(1)
    typer.echo("ok: consecutive versions share their declared anchors")
    for old, new in _consecutive(banks):
        anchors = " ".join(f"--task {a}" for a in shared_anchors(old, new))
        typer.echo(f"compare {new.id} v{old.version} and v{new.version} on: {anchors}")
