"""A small HTTP client for the API (CLI, demo, tests and benchmarks use it).

The one place of the service that speaks HTTP to a regua service (model APIs are
:mod:`regua.llm`'s): a service that does not answer is a :class:`ServiceUnreachableError` saying
what to do, so no caller needs to know the HTTP library.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx

from regua.errors import ConfigurationError, ReguaError, ServiceUnreachableError

ServiceResponse = httpx.Response
"""A response of the service (what :class:`ServiceHttp` methods return)."""


def no_service_text(url: object, exc: Exception) -> str:
    """What to do when nothing answers (e.g. after ``regua demo``, whose service has stopped)."""
    try:
        where = str(httpx.URL(str(url)).copy_with(path="/", query=None))
    except (TypeError, ValueError, httpx.InvalidURL):
        where = "the service URL"
    return (
        f"no regua service answers at {where} ({exc}).\n"
        "Start one with `regua serve` (add --data-dir DIR for a demo's data folder), or run "
        "`regua demo --keep` to leave the demo's service up; point --url or REGUA_URL at a "
        "running service."
    )


class ServiceHttp(httpx.Client):
    """An HTTP client of one service whose transport errors are :class:`ServiceUnreachableError`."""

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request``; nothing answering is a regua error naming what to do."""
        try:
            return super().send(request, **kwargs)
        except httpx.ConnectError as exc:
            raise ServiceUnreachableError(no_service_text(request.url, exc)) from exc
        except httpx.HTTPError as exc:
            raise ServiceUnreachableError(f"cannot reach the service: {exc}") from exc


def service_answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether ``GET {url}/v1/health`` answers 200 (False when nothing answers)."""
    with ServiceHttp(timeout=timeout_s) as http:
        try:
            return http.get(f"{url.rstrip('/')}/v1/health").status_code == 200
        except ServiceUnreachableError:
            return False


class ApiError(ReguaError):
    """The API answered with an error status."""

    def __init__(self, status: int, body: Any) -> None:
        """Keep the status and the decoded body; the message names the body's ``detail``."""
        self.status = status
        self.body = body
        detail = body.get("detail") if isinstance(body, dict) else body
        super().__init__(f"HTTP {status}: {detail}")


def read_token(data_dir: Path) -> str | None:
    """The admin token written on first start, if readable."""
    path = data_dir / "admin-token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


class ReguaClient:
    """Bearer-authenticated calls to ``/v1``; retries 429 with the server's ``Retry-After``."""

    def __init__(self, url: str, token: str | None, timeout_s: float = 60.0) -> None:
        """Open a client of the service at ``url``; a missing ``token`` is a configuration error."""
        if not token:
            raise ConfigurationError(
                "no API token: pass --token, set REGUA_TOKEN or run serve once"
            )
        self.url = url.rstrip("/")
        self.http = ServiceHttp(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout_s
        )

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def __enter__(self) -> ReguaClient:
        """Use as ``with ReguaClient(...) as client:`` (closed on exit)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connection pool."""
        self.close()

    def _json(self, response: ServiceResponse) -> Any:
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code >= 400:
            raise ApiError(response.status_code, body)
        return body

    def _post(self, path: str, payload: dict[str, Any], max_wait_s: float = 600.0) -> Any:
        deadline = time.monotonic() + max_wait_s
        while True:
            response = self.http.post(path, json=payload)
            if response.status_code == 429 and time.monotonic() < deadline:
                time.sleep(float(response.headers.get("Retry-After", "1")))
                continue
            return self._json(response)

    def submit(
        self, task: str, label: str, output: str, provider: str | None = None, **params: Any
    ) -> str:
        """POST one run; returns its id."""
        model: dict[str, Any] = {"label": label, "provider": provider, "params": params or None}
        body = self._post("/v1/runs", {"task": task, "model": model, "output": output})
        return str(body["run_id"])

    def submit_batch(self, runs: list[dict[str, Any]]) -> list[str]:
        """POST many runs at once (all or none); returns their ids in order."""
        body = self._post("/v1/runs/batch", {"runs": runs})
        return [str(r["run_id"]) for r in body["runs"]]

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        """POST a generation (``/v1/generations``); returns its job."""
        body: dict[str, Any] = self._post("/v1/generations", request)
        return body

    def generation(self, job_id: str) -> dict[str, Any]:
        """GET a generation job (state, repeats done, run ids once done)."""
        result: dict[str, Any] = self._json(self.http.get(f"/v1/generations/{job_id}"))
        return result

    def run(self, run_id: str) -> dict[str, Any]:
        """GET one run."""
        result: dict[str, Any] = self._json(self.http.get(f"/v1/runs/{run_id}"))
        return result

    def artifact(self, sha256: str) -> ServiceResponse:
        """GET one artifact (the raw response, to check media type and bytes)."""
        return self.http.get(f"/v1/artifacts/{sha256}")

    def wait(
        self,
        run_ids: Iterable[str],
        timeout_s: float = 600.0,
        on_progress: Callable[[int, int], None] | None = None,
        poll_s: float = 0.5,
    ) -> dict[str, dict[str, Any]]:
        """Poll until every run is ``done``; returns the final views by id."""
        pending = list(run_ids)
        total = len(pending)
        done: dict[str, dict[str, Any]] = {}
        deadline = time.monotonic() + timeout_s
        while pending:
            still = []
            for run_id in pending:
                view = self.run(run_id)
                if view["status"] == "done":
                    done[run_id] = view
                else:
                    still.append(run_id)
            pending = still
            if on_progress is not None:
                on_progress(len(done), total)
            if pending:
                if time.monotonic() > deadline:
                    raise ConfigurationError(f"{len(pending)} run(s) not done after {timeout_s}s")
                time.sleep(poll_s)
        return done
