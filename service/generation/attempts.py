"""One generation call with retries: backoff, the server's ``Retry-After``, timing, the cause.

The same for every provider (tenacity does the retrying). A provider error is never raised to
the caller: it comes back as a :class:`CallResult` without a reply, with the cause, so the run
is stored as ``incomplete`` (a machinery failure, never a fail of the work).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from regua.settings import Settings
from service.generation.provider import Provider, ProviderCall, ProviderHttpError, ProviderReply


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
        """The policy of ``REGUA_GENERATION_*``."""
        return cls(
            settings.generation_max_attempts,
            settings.generation_backoff_s,
            max(settings.generation_backoff_s, 30.0),
            settings.generation_max_retry_after_s,
        )


@dataclass(frozen=True)
class CallResult:
    """The reply (None when the provider gave none), how many attempts, how long, and why not."""

    reply: ProviderReply | None
    attempts: int
    latency_ms: float | None
    """Round trip of the attempt that answered."""
    elapsed_ms: float
    """All attempts and waits together."""
    timed_out: bool = False
    cause: str | None = None


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, ProviderHttpError):
        return exc.retryable
    return isinstance(exc, httpx.TimeoutException | httpx.TransportError)


def _cause(exc: BaseException, call: ProviderCall) -> str:
    if isinstance(exc, ProviderHttpError):
        return exc.cause
    if isinstance(exc, httpx.TimeoutException):
        return f"timeout: no answer within {call.params.timeout_s:g} s"
    if isinstance(exc, httpx.TransportError):
        return f"unreachable: {type(exc).__name__}: {exc}"[:500]
    return f"provider_error: {type(exc).__name__}: {exc}"[:500]


def call_with_retries(
    provider: Provider, http: httpx.Client, call: ProviderCall, policy: RetryPolicy
) -> CallResult:
    """Call ``provider`` until it answers, a non-retryable error, or the attempts run out."""
    backoff = wait_exponential(multiplier=policy.backoff_s, max=policy.max_backoff_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, ProviderHttpError) and exc.retry_after_s is not None:
            return min(exc.retry_after_s, policy.max_retry_after_s)
        return float(backoff(state))

    started = time.perf_counter()
    attempts = 0
    latency_ms: float | None = None
    try:
        for attempt in Retrying(
            stop=stop_after_attempt(policy.max_attempts),
            wait=wait,
            retry=retry_if_exception(_retryable),
            reraise=True,
        ):
            with attempt:
                attempts += 1
                t0 = time.perf_counter()
                reply = provider.send(http, call)
                latency_ms = (time.perf_counter() - t0) * 1000
    except Exception as exc:  # recorded as the run's cause, never raised
        elapsed = (time.perf_counter() - started) * 1000
        timed_out = isinstance(exc, httpx.TimeoutException)
        return CallResult(None, attempts, None, elapsed, timed_out, _cause(exc, call))
    elapsed = (time.perf_counter() - started) * 1000
    return CallResult(reply, attempts, latency_ms, elapsed)
