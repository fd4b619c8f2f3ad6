"""One model call with retries: limits, backoff, the server's ``Retry-After``, timing, redaction.

The same for every caller (judges, pairwise judges, generation) and every provider; tenacity does
the retrying. Retried: the statuses of :data:`~regua.llm.http.RETRYABLE_STATUS`, timeouts and
transport errors. ``Retry-After`` is obeyed up to :attr:`RetryPolicy.max_retry_after_s`. Each
attempt holds a slot of the endpoint's key (:func:`~regua.llm.endpoint.limit_key`; the bundled
mock's is ``mock``) in the limiter in force. A provider error is never
raised: it comes back as a :class:`CallResult` without a reply, with a :class:`CallFailure`
whose texts passed the redaction step.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from regua.llm.call import ModelCall, ModelReply
from regua.llm.endpoint import limit_key
from regua.llm.http import ProviderHttpError
from regua.llm.limits import Limiter
from regua.llm.redact import Redactor
from regua.llm.registry import provider_for
from regua.settings import Settings

FailureKind = Literal["http_status", "bad_reply", "timeout", "unreachable", "error"]
LEASE_MARGIN_S = 60.0
"""A slot's lease outlives its attempt's timeout by this much (a fleet lease of a killed worker
frees itself after it)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a call is retried."""

    max_attempts: int = 4
    backoff_s: float = 1.0
    """First wait of the exponential backoff (doubling, at most ``max_backoff_s``)."""
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    """A server's ``Retry-After`` is obeyed up to this many seconds."""

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """The generation policy of ``REGUA_GENERATION_*``."""
        return cls(
            settings.generation_max_attempts,
            settings.generation_backoff_s,
            max(settings.generation_backoff_s, 30.0),
            settings.generation_max_retry_after_s,
        )


@dataclass(frozen=True)
class CallFailure:
    """Why a call has no reply: its kind, a one-line cause, the status and body (redacted)."""

    kind: FailureKind
    cause: str
    """e.g. ``http_429: slow down``, ``timeout: no answer within 30 s``."""
    status: int | None = None
    body: str = ""
    error: str = ""
    """The transport error's class name (``ConnectError``) for ``unreachable``."""


@dataclass(frozen=True)
class CallResult:
    """The reply (None when the provider gave none), how many attempts, how long, and why not."""

    reply: ModelReply | None
    attempts: int
    latency_ms: float | None
    """Round trip of the attempt that answered."""
    elapsed_ms: float
    """All attempts and waits together."""
    failure: CallFailure | None = None

    @property
    def timed_out(self) -> bool:
        """Whether the last attempt ran out of time."""
        return self.failure is not None and self.failure.kind == "timeout"

    @property
    def cause(self) -> str | None:
        """The failure's cause (None with a reply)."""
        return self.failure.cause if self.failure is not None else None


class _Pool:
    """One kept-alive ``httpx`` client per process (rebuilt in a forked child)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._pid = 0

    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None or self._pid != os.getpid():
                # no connection cap of its own: the limiters bound the calls in flight
                limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
                self._client, self._pid = httpx.Client(limits=limits), os.getpid()
            return self._client

    def close(self) -> None:
        """Close the kept-alive connections (at exit)."""
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client = None


_POOL = _Pool()
atexit.register(_POOL.close)


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, ProviderHttpError):
        return exc.retryable
    return isinstance(exc, httpx.TransportError)  # timeouts included


def _failure(exc: BaseException, call: ModelCall, redact: Redactor) -> CallFailure:
    if isinstance(exc, ProviderHttpError):
        kind: FailureKind = "http_status" if exc.status is not None else "bad_reply"
        return CallFailure(kind, redact(exc.cause), exc.status, redact(exc.body))
    name = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return CallFailure("timeout", f"timeout: no answer within {call.timeout_s:g} s", error=name)
    if isinstance(exc, httpx.TransportError):
        return CallFailure("unreachable", redact(f"unreachable: {name}: {exc}")[:500], error=name)
    return CallFailure("error", redact(f"provider_error: {name}: {exc}")[:500], error=name)


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    backoff = wait_exponential(multiplier=policy.backoff_s, max=policy.max_backoff_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, ProviderHttpError) and exc.retry_after_s is not None:
            return min(exc.retry_after_s, policy.max_retry_after_s)
        return float(backoff(state))

    return wait


def call_model(
    call: ModelCall, policy: RetryPolicy, *, limiter: Limiter, redact: Redactor
) -> CallResult:
    """Call the model until it answers, a non-retryable error, or the attempts run out."""
    provider = provider_for(call.api)
    redact = redact.with_secrets(call.api_key)
    key, hold_s = limit_key(call.api, call.base_url), call.timeout_s + LEASE_MARGIN_S
    http = _POOL.client()
    started = time.perf_counter()
    attempts = 0
    latency_ms: float | None = None
    try:
        for attempt in Retrying(
            stop=stop_after_attempt(policy.max_attempts),
            wait=_wait(policy),
            retry=retry_if_exception(_retryable),
            reraise=True,
        ):
            with attempt, limiter.slot(key, hold_s):
                attempts += 1
                t0 = time.perf_counter()
                reply = provider.send(http, call)
                latency_ms = (time.perf_counter() - t0) * 1000
    except Exception as exc:  # recorded as the caller's cause, never raised
        elapsed = (time.perf_counter() - started) * 1000
        return CallResult(None, attempts, None, elapsed, _failure(exc, call, redact))
    elapsed = (time.perf_counter() - started) * 1000
    clean = replace(reply, text=redact(reply.text), body=redact(reply.body))
    return CallResult(clean, attempts, latency_ms, elapsed)
