"""How the vision judges ask a model: one :mod:`regua.llm` call, its failure as a judge cause.

Both the per-criterion judge and the pairwise judge call the model through
:func:`regua.llm.client.call_model` (limits, retries, ``Retry-After``, redaction), and name a
call that got no reply with the same causes: ``timeout``, ``api_unreachable``,
``rate_limited`` (429 to the end), ``api_error`` (another status) or ``unparseable`` (a body
that is no reply).
"""

from __future__ import annotations

from dataclasses import dataclass

from regua.llm.call import ModelCall
from regua.llm.client import CallFailure, CallResult, RetryPolicy, call_model
from regua.llm.limits import limiter_for
from regua.llm.redact import Redactor, redactor_for
from regua.settings import Settings

RAW_ERROR_CHARS = 2000
"""How much of an error body a failure keeps (after redaction)."""


@dataclass(frozen=True)
class FailedCall:
    """A judge failure's cause, detail and the raw body it keeps (None: no body)."""

    cause: str
    detail: str
    raw: str | None = None


def ask(call: ModelCall, policy: RetryPolicy, settings: Settings | None) -> CallResult:
    """Make ``call`` under the process's limiter and redaction step."""
    return call_model(call, policy, limiter=limiter_for(settings), redact=redactor_for(settings))


def failed_call(failure: CallFailure, base_url: str, timeout_s: float) -> FailedCall:
    """The judge failure of a call that got no reply (redacted: a URL may hold a key)."""
    found = _failed(failure, base_url, timeout_s)
    clean = Redactor()
    return FailedCall(clean(found.cause), clean(found.detail), clean.optional(found.raw))


def _failed(failure: CallFailure, base_url: str, timeout_s: float) -> FailedCall:
    raw = failure.body[:RAW_ERROR_CHARS] or None
    if failure.kind == "timeout":
        return FailedCall("timeout", f"no reply within {timeout_s:g}s")
    if failure.kind == "unreachable":
        return FailedCall("api_unreachable", f"{failure.error} talking to {base_url}")
    if failure.kind == "bad_reply":
        return FailedCall("unparseable", f"reply body is no answer: {failure.cause}", raw)
    if failure.status == 429:
        return FailedCall("rate_limited", f"HTTP 429 from {base_url}", raw)
    if failure.status is not None:
        return FailedCall("api_error", f"HTTP {failure.status} from {base_url}", raw)
    return FailedCall("api_error", failure.cause, raw)
