"""``regua review``: label the blinded review queue from a terminal.

Each item shows the work's opaque label, the criterion's question and the paths of its frames
(downloaded from ``/v1/artifacts`` into a local folder, to open with any image viewer); the
reviewer types one of p/f/u/n, an optional note and, for animated tasks, the frame time.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from regua.client import Client, ServiceHttp, ServiceResponse
from regua.errors import ApiError, ReguaError
from regua.settings import load_settings
from service.api.client import read_token

KEYS = {"p": "pass", "f": "fail", "u": "uncertain", "n": "not_applicable"}


class ReviewSession:
    """Thin client of ``/v1/reviews`` that keeps frames on disk for the terminal."""

    def __init__(self, http: ServiceHttp, frames_dir: Path) -> None:
        """Call the API through ``http`` and download frames under ``frames_dir``."""
        self.http = http
        self.frames_dir = frames_dir

    def _json(self, response: ServiceResponse) -> Any:
        body = response.json() if response.content else {}
        if response.status_code >= 400:
            raise ApiError(response.status_code, body)
        return body

    def next(self, skip: list[str]) -> dict[str, Any]:
        """The next item and progress (``item`` is None when the queue is empty for you)."""
        return dict(self._json(self.http.get("/v1/reviews/next", params={"skip": skip})))

    def frames(self, item: dict[str, Any]) -> list[tuple[float, Path]]:
        """Download the item's frames; returns (time, local path) pairs."""
        folder = self.frames_dir / item["item_id"]
        folder.mkdir(parents=True, exist_ok=True)
        out: list[tuple[float, Path]] = []
        for f in item["frames"]:
            path = folder / f"frame-{round(float(f['time_s']) * 1000):06d}ms.png"
            if not path.exists():
                response = self.http.get(f["url"])
                if response.status_code >= 400:
                    raise ApiError(response.status_code, response.text)
                path.write_bytes(response.content)
            out.append((float(f["time_s"]), path))
        return out

    def label(self, item_id: str, status: str, note: str, time_s: float | None) -> dict[str, Any]:
        """Post one label."""
        body = {"status": status, "note": note, "time_s": time_s}
        return dict(self._json(self.http.post(f"/v1/reviews/{item_id}", json=body)))

    def listing(self, status: str | None) -> list[dict[str, Any]]:
        """Items of the queue (optionally of one state)."""
        params = {"status": status} if status else {}
        return list(self._json(self.http.get("/v1/reviews", params=params))["items"])


def describe(
    item: dict[str, Any], frames: list[tuple[float, Path]], progress: dict[str, int]
) -> str:
    """The text shown for one item (plain, no model identity: the API never sends one)."""
    lines = [
        f"[{progress['done']} labelled, {progress['left']} left]  work {item['work']}  "
        f"task {item['task']['ref']}  criterion {item['criterion']['id']}"
        + ("  (ADJUDICATION: reviewers disagreed)" if item.get("adjudication") else ""),
        "",
        f"  {item['criterion']['question']}",
        "",
    ]
    lines += [f"  frame t={t:.3f}s  {p}" for t, p in frames] or ["  (no frames stored)"]
    return "\n".join(lines)


def loop(
    session: ReviewSession,
    ask: Callable[[str], str],
    say: Callable[[str], None],
    show_suggestion: bool = False,
    limit: int | None = None,
) -> int:
    """Label items until the queue is empty, ``q`` is typed or ``limit`` labels are given."""
    skipped: list[str] = []
    given = 0
    while limit is None or given < limit:
        data = session.next(skipped)
        item = data.get("item")
        if item is None:
            say("Nothing left for you to label.")
            break
        say(describe(item, session.frames(item), data["progress"]))
        suggestion = item.get("suggestion")
        if show_suggestion and suggestion:
            say(f"  judges suggest: {suggestion['status']} (not preselected)")
        choice = ""
        while choice not in KEYS and choice not in ("s", "q"):
            choice = (
                ask("verdict [p]ass [f]ail [u]ncertain [n]ot applicable, [s]kip, [q]uit")
                .strip()
                .lower()[:1]
            )
        if choice == "q":
            break
        if choice == "s":
            skipped.append(item["item_id"])
            continue
        note = ask("note (optional)").strip()
        time_s: float | None = None
        while item["task"]["mode"] == "animated":
            raw = ask("frame time in seconds (optional)").strip()
            try:
                time_s = float(raw) if raw else None
                break
            except ValueError:
                say("  a number of seconds, e.g. 1.25, or nothing")
        result = session.label(item["item_id"], KEYS[choice], note, time_s)
        given += 1
        say(
            f"  saved: item is {result['state']}"
            + (" (outcome re-computed)" if result.get("outcome_recomputed") else "")
        )
    return given


def review(
    url: str | None = typer.Option(None, help="Service URL (REGUA_URL; default from settings)"),
    token: str | None = typer.Option(None, help="Reviewer token (REGUA_TOKEN)"),
    frames_dir: Path | None = typer.Option(
        None, help="Where frames are saved (default: a temp folder)"
    ),
    list_status: str | None = typer.Option(
        None, "--list", help="Only list items of this state (open, disputed, resolved, all)"
    ),
    suggestion: bool = typer.Option(False, help="Show the judges' suggestion (never preselected)"),
) -> None:
    """Label the blinded review queue from a terminal (shows the question and frame paths)."""
    console = Console()
    settings = load_settings()
    base = url or os.environ.get("REGUA_URL") or f"http://{settings.host}:{settings.port}"
    secret = token or os.environ.get("REGUA_TOKEN") or read_token(settings.data_dir)
    if not secret:
        console.print("[red]no token: pass --token or set REGUA_TOKEN[/red]")
        raise typer.Exit(2)
    folder = frames_dir or Path(tempfile.mkdtemp(prefix="regua-review-"))
    with Client(base, secret, timeout_s=60) as client:
        session = ReviewSession(client.http, folder)
        try:
            if list_status is not None:
                items = session.listing(None if list_status == "all" else list_status)
                for i in items:
                    typer.echo(
                        f"{i['item_id']}  {i['work']}  {i['task']}  {i['criterion']:<4} "
                        f"{i['kind']:<9} {i['state']:<9} {i['reviews']}/{i['reviews_needed']}"
                        + (f"  final={i['final']}" if i.get("final") else "")
                    )
                return
            typer.echo(f"frames are saved under {folder}")
            given = loop(
                session,
                lambda q: str(typer.prompt(q, default="", show_default=False)),
                typer.echo,
                suggestion,
            )
            console.print(f"{given} label(s) saved.")
        except ReguaError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc


def register(app: typer.Typer) -> None:
    """Add ``regua review`` to the main app."""
    app.command("review")(review)
