"""Every method of the two clients, written once: a plan of calls to send and pauses to sleep.

A method's body is a *plan*: a generator that yields a :class:`~regua.client.transport.Call`
(and is sent back its answer) or a :class:`Pause`, and returns the method's result.
:class:`Method` makes a class attribute of a plan (or of one call of :mod:`regua.client.calls`);
:class:`~regua.client.Client` carries the plan out plainly, :class:`~regua.client.AsyncClient`
awaited, so an operation's signature, docstring and logic stand once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    TypeVar,
    cast,
    overload,
)

from regua.client import calls
from regua.client.calls import RunInput
from regua.client.common import WAIT_S, ClientBase, JobWait, Progress, RunsWait
from regua.client.transport import Call
from regua.views.jobs import GenerationJobView
from regua.views.submissions import RunView

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Pause:
    """A step of a plan: sleep ``seconds`` (``time.sleep`` or ``asyncio.sleep``)."""

    seconds: float


Step = Call[Any] | Pause
Plan = Generator[Step, Any, T]
"""A method's body: yields the calls to send (receiving their answers) and the pauses."""
AnyClient = ClientBase[Any, Any]


class Performer(Protocol):
    """A client that carries out a plan (plainly, or as an awaitable)."""

    def perform(self, plan: Plan[Any]) -> Any:
        """The plan's result (or an awaitable of it)."""


class Plainly(Protocol):
    """A client that carries out a plan plainly (:class:`~regua.client.Client`)."""

    def perform(self, plan: Plan[T]) -> T:
        """The plan's result."""


class Awaited(Protocol):
    """A client that carries out a plan awaited (:class:`~regua.client.AsyncClient`)."""

    def perform(self, plan: Plan[T]) -> Coroutine[Any, Any, T]:
        """An awaitable of the plan's result."""


class Steps(Generic[T]):
    """A plan being carried out: given each answer, the next step; ``None`` once it is done."""

    def __init__(self, plan: Plan[T]) -> None:
        """Start on ``plan`` (its first step is asked with the answer ``None``)."""
        self.plan = plan
        self.result: T

    def next(self, answer: Any) -> Step | None:
        """The step after ``answer``; ``None`` when the plan returned (see :attr:`result`)."""
        try:
            return self.plan.send(answer)
        except StopIteration as done:
            self.result = cast(T, done.value)
            return None


class Method(Generic[P, T]):
    """A client method made of a plan: the client it is read from carries the plan out."""

    def __init__(
        self,
        plan: Callable[Concatenate[AnyClient, P], Plan[T]],
        about: Callable[..., Any] | None = None,
    ) -> None:
        """The method whose body is ``plan`` (called with the client first).

        Its name and docstring are those of ``about`` (by default the plan's own).
        """
        self.plan = plan
        functools.update_wrapper(cast(Any, self), about or plan)
        told = inspect.signature(about or plan)
        shown = list(told.parameters.values())[0 if about else 1 :]
        self.__signature__ = told.replace(parameters=shown, return_annotation=told.empty)

    @classmethod
    def of_call(cls, build: Callable[P, Call[T]]) -> Method[P, T]:
        """The method that sends the one call ``build`` makes of its arguments."""

        def plan(_client: AnyClient, /, *args: P.args, **kwargs: P.kwargs) -> Plan[T]:
            answer: T = yield build(*args, **kwargs)
            return answer

        return cls(plan, build)

    @overload
    def __get__(self, client: None, owner: type[Any] | None = None) -> Method[P, T]: ...

    @overload
    def __get__(self, client: Plainly, owner: type[Any] | None = None) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, client: Awaited, owner: type[Any] | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: Performer | None, owner: type[Any] | None = None) -> Any:
        """On a client: the bound method; on the class: this method."""
        if client is None:
            return self

        def bound(*args: Any, **kwargs: Any) -> Any:
            return client.perform(self.plan(cast(AnyClient, client), *args, **kwargs))

        return functools.update_wrapper(bound, cast(Any, self))


def wait(
    client: AnyClient,
    /,
    run_ids: Iterable[str],
    *,
    timeout_s: float = 600.0,
    on_progress: Progress | None = None,
    poll_s: float = 0.5,
    wait_s: float = WAIT_S,
) -> Plan[dict[str, RunView]]:
    """Wait until every run is done; their final views by id (``TimeoutError`` past it).

    Each look asks the service to hold the answer until the oldest pending run is done, up
    to ``wait_s`` seconds (a long poll: no request while nothing changes); ``wait_s=0``
    looks at every pending run every ``poll_s`` seconds instead.
    """
    waiting = RunsWait(run_ids, timeout_s, on_progress)
    if client.long_poll_s(wait_s) <= 0:
        while True:
            looks = {}
            for run_id in waiting.pending:
                looks[run_id] = yield calls.run(run_id)
            if waiting.finished(looks):
                return waiting.done
            yield Pause(poll_s)
    while True:
        run_id, held_s = waiting.next_look(client.long_poll_s(wait_s))
        if waiting.finished({run_id: (yield calls.run(run_id, held_s))}):
            return waiting.done


def evaluate(client: AnyClient, /, runs: Sequence[RunInput], **options: Any) -> Plan[list[RunView]]:
    """Submit outputs as one batch and wait for them (``options``: those of ``wait``).

    Their views in order.
    """
    ids = [r.run_id for r in (yield calls.submit_batch(runs)).runs]
    views = yield from wait(client, ids, **options)
    return [views[i] for i in ids]


def wait_generation(
    _client: AnyClient,
    /,
    job_id: str,
    *,
    timeout_s: float = 600.0,
    on_progress: Progress | None = None,
    poll_s: float = 0.5,
) -> Plan[GenerationJobView]:
    """Poll a generation until it is no longer running (``TimeoutError`` past the deadline)."""
    waiting = JobWait(job_id, timeout_s, on_progress)
    while True:
        job: GenerationJobView = yield calls.generation(job_id)
        if waiting.finished(job):
            return job
        yield Pause(poll_s)


class Methods:
    """The methods both clients offer (each a :class:`Method`); the clients add how to send."""

    request = Method.of_call(calls.request)
    submit = Method.of_call(calls.submit)
    submit_batch = Method.of_call(calls.submit_batch)
    run = Method.of_call(calls.run)
    runs = Method.of_call(calls.runs)
    wait = Method(wait)
    evaluate = Method(evaluate)
    report = Method.of_call(calls.report)
    generate = Method.of_call(calls.generate)
    generation = Method.of_call(calls.generation)
    wait_generation = Method(wait_generation)
    start_experiment = Method.of_call(calls.start_experiment)
    experiment = Method.of_call(calls.experiment)
    experiment_report = Method.of_call(calls.experiment_report)
    experiment_history = Method.of_call(calls.experiment_history)
    calibrations = Method.of_call(calls.calibrations)
    calibration = Method.of_call(calls.calibration)
    calibrate = Method.of_call(calls.calibrate)
    calibration_job = Method.of_call(calls.calibration_job)
    pairwise_ranking = Method.of_call(calls.pairwise_ranking)
    compare = Method.of_call(calls.compare)
    pairwise_job = Method.of_call(calls.pairwise_job)
