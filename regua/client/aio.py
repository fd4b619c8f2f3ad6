"""The asynchronous client: :class:`AsyncClient` (the twin of :class:`regua.client.Client`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import httpx
from tenacity import AsyncRetrying

from regua.client import calls
from regua.client.calls import RunInput
from regua.client.common import WAIT_S, ClientBase, JobWait, Progress, RunsWait
from regua.client.transport import AsyncServiceHttp, Call, decoded, read
from regua.views.calibrations import CalibrationList, CalibrationView
from regua.views.experiments import (
    ExperimentAccepted,
    ExperimentHistory,
    ExperimentProgress,
    ExperimentReport,
)
from regua.views.jobs import GenerationJobView, JobView
from regua.views.pairwise import RankingView
from regua.views.reports import ReportDocument
from regua.views.submissions import BatchAccepted, RunAccepted, RunList, RunView

T = TypeVar("T")


class AsyncClient(ClientBase[httpx.AsyncBaseTransport, AsyncServiceHttp]):
    """The async twin of :class:`regua.client.Client`: the same methods, awaited.

    ``AsyncClient(url, token, timeout_s=60.0, backoff=None, transport=None)``, what
    :class:`~regua.client.common.ClientBase` says. Use as ``async with AsyncClient(...)``.
    """

    def open_http(
        self, transport: httpx.AsyncBaseTransport | None, **session: Any
    ) -> AsyncServiceHttp:
        """An asynchronous HTTP session."""
        return AsyncServiceHttp(transport=transport, **session)

    async def close(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        """Use as ``async with AsyncClient(...) as client:`` (closed on exit)."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Close the connection pool."""
        await self.close()

    async def send(self, call: Call[T]) -> T:
        """Send one call (retrying 429 and 503) and read its answer."""
        retrying = AsyncRetrying(sleep=asyncio.sleep, **self.backoff.tenacity_args())
        answer: httpx.Response = await retrying(
            self.http.request, call.method, call.path, params=call.query(), json=call.json
        )
        return read(call, answer)

    async def request(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> Any:
        """Any ``/v1`` request; the decoded JSON answer."""
        return await self.send(calls.request(method, path, json=json, params=params))

    async def submit(self, run: RunInput) -> RunAccepted:
        """Submit one model output; the run's id and status."""
        return await self.send(calls.submit(run))

    async def submit_batch(self, runs: Sequence[RunInput]) -> BatchAccepted:
        """Submit many outputs at once (all accepted or none); their ids in order."""
        return await self.send(calls.submit_batch(runs))

    async def run(self, run_id: str, wait_s: float = 0.0) -> RunView:
        """One run: status, outcome, criteria with every vote, stages and artifacts.

        With ``wait_s`` (at most 60) the service answers as soon as the run is done, or after
        ``wait_s`` seconds with the run as it is then.
        """
        return await self.send(calls.run(run_id, wait_s))

    async def runs(
        self, task: str | None = None, status: str | None = None, limit: int = 100, offset: int = 0
    ) -> RunList:
        """A page of the caller's runs, newest first."""
        return await self.send(calls.runs(task, status, limit, offset))

    async def wait(
        self,
        run_ids: Iterable[str],
        *,
        timeout_s: float = 600.0,
        on_progress: Progress | None = None,
        poll_s: float = 0.5,
        wait_s: float = WAIT_S,
    ) -> dict[str, RunView]:
        """Wait until every run is done; their final views by id (``TimeoutError`` past it).

        Each look asks the service to hold the answer until the oldest pending run is done, up
        to ``wait_s`` seconds (a long poll: no request while nothing changes); ``wait_s=0``
        looks at every pending run every ``poll_s`` seconds instead.
        """
        waiting = RunsWait(run_ids, timeout_s, on_progress)
        if self.long_poll_s(wait_s) <= 0:
            while not waiting.finished({i: await self.run(i) for i in waiting.pending}):
                await asyncio.sleep(poll_s)
            return waiting.done
        while True:
            run_id, wait = waiting.next_look(self.long_poll_s(wait_s))
            if waiting.finished({run_id: await self.run(run_id, wait)}):
                return waiting.done

    async def evaluate(self, runs: Sequence[RunInput], **wait: Any) -> list[RunView]:
        """Submit outputs as one batch and wait for them; their views in order."""
        ids = [r.run_id for r in (await self.submit_batch(runs)).runs]
        views = await self.wait(ids, **wait)
        return [views[i] for i in ids]

    async def report(
        self, tasks: Sequence[str], models: Sequence[str] = (), **options: str | int | bool
    ) -> ReportDocument:
        """The report of ``tasks`` (``ID@VERSION`` or ``ID``), optionally of some models."""
        return await self.send(calls.report(tasks, models, **options))

    async def generate(self, request: Mapping[str, Any]) -> GenerationJobView:
        """Ask the service to call a model for a task (``docs/generation.md``); the job."""
        return await self.send(calls.generate(request))

    async def generation(self, job_id: str) -> GenerationJobView:
        """A generation job: state, repeats done, run ids once done."""
        return await self.send(calls.generation(job_id))

    async def wait_generation(
        self,
        job_id: str,
        *,
        timeout_s: float = 600.0,
        on_progress: Progress | None = None,
        poll_s: float = 0.5,
    ) -> GenerationJobView:
        """Poll a generation until it is no longer running (``TimeoutError`` past the deadline)."""
        waiting = JobWait(job_id, timeout_s, on_progress)
        while not waiting.finished(job := await self.generation(job_id)):
            await asyncio.sleep(poll_s)
        return job

    async def start_experiment(
        self,
        file_text: str | None = None,
        document: Mapping[str, Any] | None = None,
        window: str | None = None,
        generator: str | None = None,
    ) -> ExperimentAccepted:
        """Run (or resume) an experiment from its file's text or its document."""
        return await self.send(calls.start_experiment(file_text, document, window, generator))

    async def experiment(self, experiment_id: str) -> ExperimentProgress:
        """How far an experiment got."""
        return await self.send(calls.experiment(experiment_id))

    async def experiment_report(self, experiment_id: str) -> ExperimentReport:
        """The paired report of an experiment."""
        return await self.send(calls.experiment_report(experiment_id))

    async def experiment_history(self, name: str) -> ExperimentHistory:
        """Every window of an experiment, one series per arm."""
        return await self.send(calls.experiment_history(name))

    async def calibrations(self) -> CalibrationList:
        """The newest stored calibration runs (admins)."""
        return await self.send(calls.calibrations())

    async def calibration(self, run_id: str) -> CalibrationView:
        """One stored calibration run with its gate decisions (admins)."""
        return await self.send(calls.calibration(run_id))

    async def calibrate(self, body: Mapping[str, Any]) -> CalibrationView | JobView:
        """Calibrate a judge (``docs/calibration.md``): the stored run, or its job."""
        return await self.send(calls.calibrate(body))

    async def calibration_job(self, job_id: str) -> JobView:
        """A calibration job."""
        return await self.send(calls.calibration_job(job_id))

    async def pairwise_ranking(
        self, task: str | None = None, criterion: str | None = None, **options: str | int
    ) -> RankingView:
        """The pairwise ranking of the stored comparisons (admins)."""
        return await self.send(calls.pairwise_ranking(task, criterion, **options))

    async def compare(self, body: Mapping[str, Any]) -> JobView:
        """Judge pairs of stored runs in the background (admins); the job."""
        return await self.send(calls.compare(body))

    async def pairwise_job(self, job_id: str) -> JobView:
        """A pairwise comparison job."""
        return await self.send(calls.pairwise_job(job_id))

    async def artifact(self, sha256: str) -> bytes:
        """One stored artifact's bytes."""
        answer = await self.http.get(f"/v1/artifacts/{sha256}")
        if answer.status_code >= 400:
            decoded(answer)
        return answer.content
