"""What the service's own commands need beside the public client (:mod:`regua.client`).

The CLI, the demo and the benchmarks talk to a service through :class:`regua.client.Client`;
this module adds where a local installation keeps its admin token and whether a service
answers at all.
"""

from __future__ import annotations

from pathlib import Path

from regua.client import ServiceHttp
from regua.errors import ServiceUnreachableError


def service_answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether ``GET {url}/v1/health`` answers 200 (False when nothing answers)."""
    with ServiceHttp(timeout=timeout_s) as http:
        try:
            return http.get(f"{url.rstrip('/')}/v1/health").status_code == 200
        except ServiceUnreachableError:
            return False


def read_token(data_dir: Path) -> str | None:
    """The admin token written on first start, if readable."""
    path = data_dir / "admin-token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None
