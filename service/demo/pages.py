"""What ``regua demo --keep`` and ``regua run`` print about the web pages and how to come back."""

from __future__ import annotations

from pathlib import Path


def web_pages(url: str, run_id: str | None = None) -> list[tuple[str, str]]:
    """The web pages worth opening on the service at ``url``, as (what, address) pairs."""
    pages = [
        ("sign in", f"{url}/login  (paste the admin token)"),
        ("runs", f"{url}/runs"),
        ("review", f"{url}/review  (with a reviewer token)"),
        ("report", f"{url}/report"),
    ]
    if run_id:
        pages.insert(2, ("one run", f"{url}/runs/{run_id}"))
        pages.append(("its JSON", f"{url}/v1/runs/{run_id}  (Authorization: Bearer <token>)"))
    pages.append(("API docs", f"{url}/v1/docs"))
    return pages


def come_back_hint(data_dir: Path, serve_url: str, run_id: str | None = None) -> list[str]:
    """How to look at a finished demo's runs again once its service has stopped.

    ``serve_url`` is where ``regua serve`` will listen (``REGUA_HOST`` / ``REGUA_PORT``).
    """
    example = run_id or "RUN_ID"
    return [
        "the demo's service has stopped, so its URLs no longer answer. To look at these runs:",
        f"  regua serve --data-dir {data_dir}      (then open {serve_url}/runs)",
        f"  regua status {example} --data-dir {data_dir}",
        "or run the demo with --keep to leave its service up until Ctrl-C.",
    ]
