"""The tests' JSON view of the public client: runs and jobs as the decoded JSON the API sent.

Service tests assert on the wire JSON (which keys are present, which are left out); this wraps
:class:`regua.client.Client` (its retries, its errors) and answers with that JSON instead of the
typed read models.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from regua.client import Client, ServiceResponse
from regua.client.common import WAIT_S


class JsonClient:
    """Calls of :class:`regua.client.Client` answered as decoded JSON."""

    def __init__(self, url: str, token: str | None, timeout_s: float = 60.0) -> None:
        """A client of the service at ``url`` with the bearer ``token``."""
        self.typed = Client(url, token, timeout_s=timeout_s)
        self.http = self.typed.http

    def close(self) -> None:
        """Close the connection pool."""
        self.typed.close()

    def __enter__(self) -> JsonClient:
        """Use as a context manager (closed on exit)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connection pool."""
        self.close()

    def submit(
        self, task: str, label: str, output: str, provider: str | None = None, **params: Any
    ) -> str:
        """POST one run; its id."""
        model = {"label": label, "provider": provider, "params": params or None}
        body = self.typed.request(
            "POST", "/v1/runs", json={"task": task, "model": model, "output": output}
        )
        return str(body["run_id"])

    def submit_batch(self, runs: list[dict[str, Any]]) -> list[str]:
        """POST many runs at once; their ids in order."""
        body = self.typed.request("POST", "/v1/runs/batch", json={"runs": runs})
        return [str(r["run_id"]) for r in body["runs"]]

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        """POST a generation; its job."""
        job: dict[str, Any] = self.typed.request("POST", "/v1/generations", json=request)
        return job

    def generation(self, job_id: str) -> dict[str, Any]:
        """GET a generation job."""
        job: dict[str, Any] = self.typed.request("GET", f"/v1/generations/{job_id}")
        return job

    def run(self, run_id: str, wait_s: float = 0.0) -> dict[str, Any]:
        """GET one run (with ``wait_s``: answered once it is done, or after that long)."""
        params = {"wait_s": wait_s} if wait_s > 0 else None
        view: dict[str, Any] = self.typed.request("GET", f"/v1/runs/{run_id}", params=params)
        return view

    def artifact(self, sha256: str) -> ServiceResponse:
        """GET one artifact (the raw response)."""
        return self.http.get(f"/v1/artifacts/{sha256}")

    def wait(
        self, run_ids: Iterable[str], timeout_s: float = 600.0, poll_s: float = 0.5
    ) -> dict[str, dict[str, Any]]:
        """Wait until every run is done; the final views by id.

        Each look is a long poll on the oldest pending run (the service answers as soon as it
        is done): one request per run and per held wait, where looking at every pending run
        every ``poll_s`` cost the server ~15 CPU ms a view, ~100 views a second for 50 runs,
        CPU the renders under test were waiting for. ``poll_s`` paces the looks only when the
        client's timeout leaves no room for a held wait.
        """
        pending, done = list(run_ids), dict[str, dict[str, Any]]()
        deadline = time.monotonic() + timeout_s
        while pending:
            left = deadline - time.monotonic()
            assert left > 0, f"{len(pending)} run(s) not done"
            held_s = self.typed.long_poll_s(min(WAIT_S, left))
            view = self.run(pending[0], wait_s=held_s)
            if view["status"] == "done":
                done[pending.pop(0)] = view
            elif held_s <= 0:
                time.sleep(poll_s)
        return done
