"""``regua token create | list | revoke``: API tokens, straight in the service's database.

The commands open the database of ``--data-dir`` (or ``REGUA_DATABASE_URL``) with the
installation secret, as the service does, so a revocation takes effect at once: the service reads
the token's row on every request and keeps no cache of principals.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from regua.settings import load_settings
from service.access.secret import open_database
from service.access.token_admin import list_tokens, parse_duration, revoke_token
from service.access.tokens import create_token
from service.storage import Database, iso
from service.tasks_store.configured import with_data_dir

token_app = typer.Typer(help="Manage API tokens.", no_args_is_help=True)

DataDir = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)")


@contextmanager
def _db(data_dir: Path | None) -> Iterator[Database]:
    """The database of ``--data-dir`` (with the installation secret), disposed on exit."""
    db = open_database(with_data_dir(load_settings(), data_dir))
    try:
        yield db
    finally:
        db.dispose()


@token_app.command("create")
def token_create(
    role: str = typer.Option(..., "--role", help="submitter | reviewer | admin"),
    name: str = typer.Option("", help="A name to recognise the token by"),
    expires_in: str | None = typer.Option(
        None, "--expires-in", help="Lifetime such as 12h, 7d or 2w (default: until revoked)"
    ),
    data_dir: Path | None = DataDir,
) -> None:
    """Create a token (the secret is printed once; only its keyed hash is stored)."""
    with _db(data_dir) as db:
        lifetime = parse_duration(expires_in) if expires_in else None
        secret, principal = create_token(db, role, name, expires_in=lifetime)
    typer.echo(secret)
    until = f", expires in {expires_in}" if expires_in else ""
    typer.echo(f"(token id {principal.token_id}, role {principal.role}{until})", err=True)


@token_app.command("list")
def token_list(data_dir: Path | None = DataDir) -> None:
    """Every token: id, state, role, name, the secret's first characters and its dates."""
    with _db(data_dir) as db:
        tokens = list_tokens(db)
    typer.echo(f"{'id':>4}  {'state':<8} {'role':<10} {'prefix':<12} {'expires':<26} name")
    for t in tokens:
        expires = iso(t.expires_at) or "never"
        line = f"{t.id:>4}  {t.state:<8} {t.role:<10} {t.prefix + '…':<12} {expires:<26} {t.name}"
        typer.echo(line)


@token_app.command("revoke")
def token_revoke(
    token_id: int = typer.Argument(..., help="The token's id (see `regua token list`)"),
    data_dir: Path | None = DataDir,
) -> None:
    """Revoke a token: it and its web sessions stop working at once."""
    with _db(data_dir) as db:
        info = revoke_token(db, token_id)
    typer.echo(f"token {info.id} ({info.role}, {info.name}) revoked at {iso(info.revoked_at)}")


def register(app: typer.Typer) -> None:
    """Add ``regua token …`` to the main app."""
    app.add_typer(token_app, name="token")
