"""How the client speaks HTTP: the request of a call, its answer parsed, and the back-off.

One :class:`Call` per API operation says the method, path, query, body and how to read the
answer into a read model of :mod:`regua.views`; the sync and async clients only send it. An
answer 429 or 503 is retried after the service's ``Retry-After`` (seconds or an HTTP date),
else after an exponential back-off, up to a bound on the attempts and on the total wait; what
is still refused then is an :class:`~regua.errors.ApiError`. The service refuses such a request
before storing anything, so repeating a submission is safe.
"""

from __future__ import annotations

import functools
import random
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from tenacity import RetryCallState, retry_if_result, stop_after_attempt, stop_after_delay

from regua.errors import ApiError, ServiceUnreachableError
from regua.retry_after import retry_after_seconds

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 503})
"""Answers that mean "not now": the request was refused before anything was stored."""

ServiceResponse = httpx.Response
"""A raw answer of the service (what :class:`ServiceHttp` methods return)."""

Query = Mapping[str, str | int | float | bool | list[str] | None]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API operation: what to send and how to read the answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Query | None = None
    json: Any = None

    def query(self) -> dict[str, Any] | None:
        """The query string's values, ``None`` ones left out."""
        if self.params is None:
            return None
        return {k: v for k, v in self.params.items() if v is not None}


@dataclass(frozen=True)
class Backoff:
    """The bounded back-off on 429 and 503.

    ``max_attempts`` bounds the tries of one request and ``max_wait_s`` the time spent waiting
    on it; one wait is the service's ``Retry-After`` when it sends one (at most
    ``max_delay_s``), else ``base_s`` doubled per attempt (at most ``max_delay_s``), jittered.
    """

    max_attempts: int = 60
    max_wait_s: float = 600.0
    base_s: float = 0.5
    max_delay_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def tenacity_args(self) -> dict[str, Any]:
        """The arguments of a tenacity ``Retrying`` / ``AsyncRetrying`` that apply this policy."""
        return {
            "retry": retry_if_result(_busy),
            "wait": self.delay,
            "stop": stop_after_attempt(self.max_attempts) | stop_after_delay(self.max_wait_s),
            "retry_error_callback": _last_answer,
            "reraise": True,
        }

    def delay(self, state: RetryCallState) -> float:
        """Seconds before the next attempt."""
        answer = state.outcome.result() if state.outcome is not None else None
        told = retry_after_s(answer.headers.get("Retry-After")) if answer is not None else None
        if told is not None:
            return min(told, self.max_delay_s)
        step: float = self.base_s * 2.0 ** (state.attempt_number - 1)
        return min(step, self.max_delay_s) * (0.5 + self.rng.random() / 2)


def _busy(answer: httpx.Response) -> bool:
    return answer.status_code in RETRY_STATUSES


def _last_answer(state: RetryCallState) -> httpx.Response:
    """After the last attempt: the last answer (turned into an error by :func:`read`)."""
    assert state.outcome is not None
    answer: httpx.Response = state.outcome.result()
    return answer


def retry_after_s(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (delta seconds or an HTTP date); ``None`` if unusable."""
    return retry_after_seconds(value)


def decoded(answer: httpx.Response) -> Any:
    """The answer's body: decoded JSON, else its text; an error status is an :class:`ApiError`."""
    try:
        body: Any = answer.json()
    except ValueError:
        body = answer.text
    if answer.status_code >= 400:
        raise ApiError(answer.status_code, body)
    return body


def read(call: Call[T], answer: httpx.Response) -> T:
    """The answer of ``call`` as its read model; an error status is an :class:`ApiError`."""
    return call.parse(decoded(answer))


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


def unreachable(url: object, exc: httpx.HTTPError) -> ServiceUnreachableError:
    """A transport failure as the regua error naming what to do."""
    if isinstance(exc, httpx.ConnectError):
        return ServiceUnreachableError(no_service_text(url, exc))
    return ServiceUnreachableError(f"cannot reach the service: {exc}")


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The TLS context httpx builds by default (certifi's CAs, ``SSL_CERT_FILE``), once a process.

    httpx builds a new one for every client it creates unless given one: ~45 CPU ms each (the
    CA bundle is read and parsed again), which a loop polling a starting service paid per poll.
    """
    return httpx.create_ssl_context()


class ServiceHttp(httpx.Client):
    """An HTTP client of one service whose transport errors are ``ServiceUnreachableError``."""

    def __init__(self, **kwargs: Any) -> None:
        """An ``httpx.Client`` (same arguments) verifying TLS with :func:`shared_tls_context`."""
        kwargs.setdefault("verify", shared_tls_context())
        super().__init__(**kwargs)

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request``; nothing answering is a regua error naming what to do."""
        try:
            return super().send(request, **kwargs)
        except httpx.HTTPError as exc:
            raise unreachable(request.url, exc) from exc


class AsyncServiceHttp(httpx.AsyncClient):
    """The async twin of :class:`ServiceHttp`."""

    def __init__(self, **kwargs: Any) -> None:
        """An ``httpx.AsyncClient`` verifying TLS with :func:`shared_tls_context`."""
        kwargs.setdefault("verify", shared_tls_context())
        super().__init__(**kwargs)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request``; nothing answering is a regua error naming what to do."""
        try:
            return await super().send(request, **kwargs)
        except httpx.HTTPError as exc:
            raise unreachable(request.url, exc) from exc
