"""``regua tasks add FILE`` and ``regua tasks variants TEMPLATE``: users' own task versions."""

from __future__ import annotations

import os
from pathlib import Path

import typer
import yaml

from regua.client import Client
from regua.errors import ApiError, ReguaError, ServiceUnreachableError
from regua.settings import load_settings
from service.api.client import read_token
from service.cli.tasks_cmd import tasks_app
from service.tasks_store.configured import with_data_dir
from service.tasks_store.files import read_text, specs_of_file
from tasks import TaskSpec
from tasks.variants import expand_template

Url = typer.Option(None, "--url", help="The service (REGUA_URL; default from REGUA_HOST/PORT)")
Token = typer.Option(
    None, "--token", help="An admin token (REGUA_TOKEN; default: DATA_DIR/admin-token)"
)
DataDir = typer.Option(None, "--data-dir", help="Data folder (REGUA_DATA_DIR)")


def _admin_client(url: str | None, token: str | None, data_dir: Path | None) -> Client:
    """A client of the running service with an admin token, or an exit saying how to get one."""
    settings = with_data_dir(load_settings(), data_dir)
    base = url or os.environ.get("REGUA_URL") or f"http://{settings.host}:{settings.port}"
    secret = token or os.environ.get("REGUA_TOKEN") or read_token(settings.data_dir)
    if not secret:
        typer.echo(
            f"error: registering a task needs an admin token, and none was found "
            f"({settings.data_dir / 'admin-token'} is absent). `regua serve` writes one there on "
            "first start; or create one with `regua token create --role admin` and pass it with "
            "--token or REGUA_TOKEN.",
            err=True,
        )
        raise typer.Exit(2)
    return Client(base, secret)


def _post_all(client: Client, specs: list[TaskSpec]) -> int:
    """POST each spec; prints one line each; the exit code (1 when one was refused)."""
    code = 0
    for spec in specs:
        response = client.http.post("/v1/tasks", json=spec.to_wire())
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text}
        if response.status_code in (200, 201):
            what = "added" if body.get("outcome") == "created" else "unchanged (already registered)"
            typer.echo(f"{body['ref']}  {what}  {str(body['content_hash'])[:12]}")
            continue
        if response.status_code in (401, 403):
            detail = body.get("detail") if isinstance(body, dict) else body
            typer.echo(
                f"error: {detail}. Registering tasks needs an admin token: DATA_DIR/admin-token "
                "after the first `regua serve`, or `regua token create --role admin`.",
                err=True,
            )
            return 1
        typer.echo(f"error: {spec.ref}: {ApiError(response.status_code, body)}", err=True)
        code = 1
    return code


def _register(
    specs: list[TaskSpec], url: str | None, token: str | None, data_dir: Path | None
) -> None:
    client = _admin_client(url, token, data_dir)
    try:
        with client:
            code = _post_all(client, specs)
    except ServiceUnreachableError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    if code:
        raise typer.Exit(code)


@tasks_app.command("add")
def add_task(
    files: list[Path] = typer.Argument(..., help="Task files (YAML or JSON) or templates"),
    url: str | None = Url,
    token: str | None = Token,
    data_dir: Path | None = DataDir,
) -> None:
    """Register task versions with the running service (POST /v1/tasks; needs an admin token).

    A file is what ``GET /v1/tasks/{ref}`` returns under ``spec`` (or ``regua tasks show --json``);
    a template file registers each of its variants. Changing a registered version is refused:
    a changed task is a new version.
    """
    specs: list[TaskSpec] = []
    try:
        for path in files:
            specs += specs_of_file(path)
    except ReguaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    _register(specs, url, token, data_dir)


@tasks_app.command("variants")
def variants(
    template: Path = typer.Argument(..., help="A template file: dimensions, variants, spec"),
    out: Path | None = typer.Option(None, "--out", help="Write one frozen spec file per variant"),
    register: bool = typer.Option(False, "--register", help="Register them with the service"),
    url: str | None = Url,
    token: str | None = Token,
    data_dir: Path | None = DataDir,
) -> None:
    """Expand a template into one frozen task version per combination of its dimensions."""
    try:
        specs = expand_template(read_text(template), str(template))
    except ReguaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    for spec in specs:
        dims = ", ".join(f"{k}={v}" for k, v in spec.dimensions.items())
        typer.echo(f"{spec.ref}  family {spec.family}  {dims}  {spec.content_hash()[:12]}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for spec in specs:
            path = out / f"{spec.id}-{spec.version}.yaml"
            path.write_text(yaml.safe_dump(spec.to_wire(), sort_keys=False), encoding="utf-8")
        typer.echo(f"wrote {len(specs)} spec files to {out}")
    if register:
        _register(specs, url, token, data_dir)


def register(app: typer.Typer) -> None:
    """The commands are on ``regua tasks`` (registered by :mod:`service.cli.tasks_cmd`)."""
    del app
