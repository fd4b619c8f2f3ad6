"""What the sync and async clients share: the connection set-up and the bookkeeping of a wait.

:class:`ClientBase` opens the HTTP session (the subclass says which kind); :class:`RunsWait` and
:class:`JobWait` keep the deadline and the progress of a poll, so each client only fetches
(plainly or awaited) and sleeps (``time.sleep`` or ``asyncio.sleep``).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

import httpx

from regua.client.transport import Backoff
from regua.errors import ConfigurationError
from regua.views.jobs import GenerationJobView
from regua.views.submissions import RunView

MAX_WAIT_S = 60.0
"""The longest wait the service grants one ``GET /v1/runs/{id}?wait_s=`` (a long poll)."""
WAIT_S = 30.0
"""How long a client's wait asks the service to hold one look at a run by default."""

Progress = Callable[[int, int], None]
"""Called as ``on_progress(done, total)`` after each look at the runs or the job."""

TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)
HttpT = TypeVar("HttpT")


def token_or_error(token: str | None) -> str:
    """The token, or the configuration error saying where one comes from."""
    if not token:
        raise ConfigurationError("no API token: pass --token, set REGUA_TOKEN or run serve once")
    return token


class ClientBase(ABC, Generic[TransportT, HttpT]):
    """A typed, bearer-authenticated client of one regua service (``/v1``).

    Every answer is parsed into the service's own read model (:mod:`regua.views`); an error
    status is an :class:`~regua.errors.ApiError`, nothing answering a
    :class:`~regua.errors.ServiceUnreachableError`; 429 and 503 are retried as
    :class:`~regua.client.transport.Backoff` says. Use as a context manager.
    """

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout_s: float = 60.0,
        backoff: Backoff | None = None,
        transport: TransportT | None = None,
    ) -> None:
        """A client of the service at ``url`` with the bearer ``token``."""
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.backoff = backoff or Backoff()
        headers = {"Authorization": f"Bearer {token_or_error(token)}"}
        session = {"base_url": self.url, "headers": headers, "timeout": timeout_s}
        self.http: HttpT = self.open_http(transport, **session)

    def long_poll_s(self, wanted_s: float) -> float:
        """The wait one look may ask the service for.

        Within the service's bound and well inside the client's own request timeout.
        """
        return max(0.0, min(wanted_s, MAX_WAIT_S, self.timeout_s / 2))

    @abstractmethod
    def open_http(self, transport: TransportT | None, **session: Any) -> HttpT:
        """The HTTP session (sync or async) the client sends its calls on.

        ``session`` holds ``base_url``, ``headers`` and ``timeout``.
        """


class RunsWait:
    """A wait on runs: which are pending, the final views of the done ones, the deadline."""

    def __init__(self, run_ids: Iterable[str], timeout_s: float, on_progress: Progress | None):
        """Start waiting on ``run_ids`` for at most ``timeout_s`` seconds."""
        self.pending = list(run_ids)
        self.done: dict[str, RunView] = {}
        self.total, self.timeout_s = len(self.pending), timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.on_progress = on_progress

    def next_look(self, wait_s: float) -> tuple[str, float]:
        """The run to look at next (the oldest pending) and how long the service may hold it.

        ``wait_s``, cut to the time left before the deadline.
        """
        left = self.deadline - time.monotonic()
        return self.pending[0], max(0.0, min(wait_s, left))

    def finished(self, looks: Mapping[str, RunView]) -> bool:
        """After a round of looks at the pending runs: report progress; True when all are done.

        Raises ``TimeoutError`` once the deadline has passed with runs still pending.
        """
        for run_id, view in looks.items():
            if view.status == "done":
                self.done[run_id] = view
                self.pending.remove(run_id)
        if self.on_progress is not None:
            self.on_progress(len(self.done), self.total)
        if not self.pending:
            return True
        if time.monotonic() > self.deadline:
            raise TimeoutError(f"{len(self.pending)} run(s) not done after {self.timeout_s}s")
        return False


class JobWait:
    """A wait on one generation job until it is no longer running."""

    def __init__(self, job_id: str, timeout_s: float, on_progress: Progress | None):
        """Start waiting on ``job_id`` for at most ``timeout_s`` seconds."""
        self.job_id, self.timeout_s, self.on_progress = job_id, timeout_s, on_progress
        self.deadline = time.monotonic() + timeout_s

    def finished(self, job: GenerationJobView) -> bool:
        """After a look at the job: report progress; True once it stopped running.

        Raises ``TimeoutError`` once the deadline has passed with the job still running.
        """
        if self.on_progress is not None:
            self.on_progress(job.done, job.repeats)
        if job.state != "running":
            return True
        if time.monotonic() > self.deadline:
            raise TimeoutError(f"generation {self.job_id} still running after {self.timeout_s}s")
        return False
