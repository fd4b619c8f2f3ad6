"""``regua tasks propose`` and ``regua tasks proposals``: generated cases, reviewed before use.

``propose TEMPLATE --dimensions persona,style --n 20 --api … --model …`` has the running service
ask the model for variants and store them as proposals (nothing is registered);
``proposals`` lists them; ``proposals accept ID…`` registers each as a frozen task version;
``proposals reject ID… --reason …`` records why not. Admin token needed (like ``tasks add``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import typer

from regua.client import Client
from regua.errors import ApiError, ReguaError
from service.cli.options import (
    Api,
    ApiKeyEnv,
    AsJson,
    BaseUrl,
    MaxTokens,
    ModelName,
    Temperature,
)
from service.cli.task_files_cmd import DataDir, Token, Url, _admin_client
from service.cli.tasks_cmd import tasks_app
from service.tasks_store.files import read_text

proposals_app = typer.Typer(
    help="Model-proposed template variants: list, accept (register) or reject them.",
    invoke_without_command=True,
)


def _call(client: Client, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    response = client.http.request(method, path, json=body)
    try:
        found = response.json()
    except ValueError:
        found = response.text
    if response.status_code >= 400:
        raise ApiError(response.status_code, found)
    return found


def _line(p: dict[str, Any]) -> str:
    values = ", ".join(
        f"{k}={v}{'*' if k in p['proposed'] else ''}" for k, v in p["values"].items()
    )
    what = p["ref"] or "-"
    state = p["state"]
    if p.get("decision") and p["decision"].get("registered_ref"):
        state += f" as {p['decision']['registered_ref']}"
    problem = f"  problem: {p['problem']}" if p.get("problem") else ""
    return f"#{p['id']:<5} {state:<10} {what:<40} {values}{problem}"


@tasks_app.command("propose")
def propose(
    template: Path = typer.Argument(..., help="A template file (dimensions, spec, weights)"),
    dimensions: str = typer.Option(
        ..., "--dimensions", help="Dimensions the model proposes values for, comma-separated"
    ),
    n: int = typer.Option(20, "--n", min=1, max=200, help="How many variants to propose"),
    api: str = Api,
    model: str = ModelName,
    base_url: str | None = BaseUrl,
    api_key_env: str | None = ApiKeyEnv,
    temperature: float | None = Temperature,
    max_tokens: int | None = MaxTokens,
    timeout_s: float = typer.Option(120.0, "--timeout", help="Seconds for the call"),
    url: str | None = Url,
    token: str | None = Token,
    data_dir: Path | None = DataDir,
) -> None:
    """Ask a model for template variants; they are stored as proposals, none registered.

    A dimension (``*`` in the list) is proposed by the model; one with ``weights`` in the
    template is allocated by them; the others are spread over their declared values. Review
    them with ``regua tasks proposals`` or on the page /tasks/proposals.
    """
    body = {
        "template": read_text(template),
        "source": str(template),
        "dimensions": [d.strip() for d in dimensions.split(",") if d.strip()],
        "n": n,
        "api": api,
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout_s": timeout_s,
    }
    with _admin_client(url, token, data_dir) as client:
        found = _call(client, "POST", "/v1/task-proposals", body)["proposals"]
    if any(p["mock"] for p in found):
        typer.echo("MOCK provider: bundled replies, not a model's")
    for p in found:
        typer.echo(_line(p))
    usable = sum(1 for p in found if not p["problem"])
    typer.echo(
        f"{len(found)} proposals stored ({usable} make a new task version); none is registered "
        "until accepted: regua tasks proposals accept ID..., or the page /tasks/proposals"
    )


@proposals_app.callback()
def proposals(
    ctx: typer.Context,
    state: str | None = typer.Option(
        None, "--state", help="proposed | accepted | rejected (default: all)"
    ),
    template: str | None = typer.Option(None, "--template", help="Only this template's"),
    as_json: bool = AsJson,
    url: str | None = Url,
    token: str | None = Token,
    data_dir: Path | None = DataDir,
) -> None:
    """List stored proposals (then ``accept`` or ``reject`` them by id)."""
    if ctx.invoked_subcommand is not None:
        return
    query = urlencode({k: v for k, v in (("state", state), ("template", template)) if v})
    with _admin_client(url, token, data_dir) as client:
        found = _call(client, "GET", "/v1/task-proposals" + (f"?{query}" if query else ""))
    found = found["proposals"]
    if as_json:
        typer.echo(json.dumps(found, indent=1))
        return
    for p in found:
        typer.echo(_line(p))
    typer.echo(f"{len(found)} proposal(s)")


def _decide(
    ids: list[int],
    verb: str,
    reason: str,
    url: str | None,
    token: str | None,
    data_dir: Path | None,
) -> None:
    code = 0
    with _admin_client(url, token, data_dir) as client:
        for pid in ids:
            try:
                done = _call(client, "POST", f"/v1/task-proposals/{pid}/{verb}", {"reason": reason})
            except ReguaError as exc:
                typer.echo(f"error: proposal {pid}: {exc}", err=True)
                code = 1
                continue
            if verb == "accept":
                typer.echo(
                    f"#{pid} accepted: {done['ref']} {done['outcome']} {done['content_hash'][:12]}"
                )
            else:
                typer.echo(f"#{pid} rejected")
    if code:
        raise typer.Exit(code)


def _decision_command(verb: str, reason_help: str, doc: str) -> Callable[..., None]:
    """The ``proposals accept`` or ``proposals reject`` command: post ``verb`` for each id."""

    def decide(
        ids: list[int] = typer.Argument(..., help="Proposal ids"),
        reason: str = typer.Option("", "--reason", help=reason_help),
        url: str | None = Url,
        token: str | None = Token,
        data_dir: Path | None = DataDir,
    ) -> None:
        _decide(ids, verb, reason, url, token, data_dir)

    decide.__doc__ = doc
    return decide


proposals_app.command("accept")(
    _decision_command(
        "accept",
        "Why (recorded)",
        "Register each proposal's task version (frozen) and record the acceptance.",
    )
)
proposals_app.command("reject")(
    _decision_command(
        "reject",
        "Why not (recorded)",
        "Record a rejection for each proposal (nothing is registered).",
    )
)


tasks_app.add_typer(proposals_app, name="proposals")


def register(app: typer.Typer) -> None:
    """The commands are on ``regua tasks`` (registered by :mod:`service.cli.tasks_cmd`)."""
    del app
