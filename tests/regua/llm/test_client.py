"""``call_model`` against the real fake model server: what is retried, how long it waits, what
a failure says, what the limiter counts, and what the fake server's answerers reply."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from regua.llm.call import Image, Message, ModelCall, Text
from regua.llm.client import CallResult, RetryPolicy, call_model
from regua.llm.endpoint import limit_key
from regua.llm.limits import LocalLimiter, install_limiter, limiter_for, uninstall_limiter
from regua.llm.redact import Redactor
from regua.llm.testing import (
    FailFirst,
    FrameTruth,
    Pairwise,
    Reply,
    Scripted,
    garbage,
    rate_limited,
    scripted_server,
    server_error,
    serving,
    sha256,
    slow,
)
from regua.settings import Settings
from tests.helpers.httpclient import Http

FAST = RetryPolicy(max_attempts=3, backoff_s=0.01, max_backoff_s=0.05, max_retry_after_s=0.3)


def _call(url: str, api: str = "openai", **extra: Any) -> ModelCall:
    call = ModelCall(
        api,
        "m",
        (Message.text("user", "draw a pelican"),),
        base_url=url,
        timeout_s=2.0,
        api_key="sk-client-test-42",
    )
    return replace(call, **extra)


def _ask(call: ModelCall, limiter: LocalLimiter | None = None) -> CallResult:
    return call_model(call, FAST, limiter=limiter or LocalLimiter(4), redact=Redactor())


def test_retried_statuses_timeouts_and_what_is_not_retried() -> None:
    with scripted_server() as server:
        server.script = [server_error(503), server_error(500), Reply("fine")]
        limiter = LocalLimiter(1)
        ok = _ask(_call(server.url), limiter)
        assert ok.reply is not None and ok.reply.text == "fine" and ok.attempts == 3
        assert limiter.taken(limit_key("openai", server.url)) == 3  # every attempt takes a slot
        server.script = [server_error(400), Reply("never asked")]
        refused = _ask(_call(server.url))
        assert refused.failure is not None and refused.failure.status == 400
        assert refused.attempts == 1 and refused.cause == "http_400: internal error"
        server.script = [garbage(), Reply("never asked")]
        bad = _ask(_call(server.url))
        assert bad.failure is not None and bad.failure.kind == "bad_reply" and bad.attempts == 1
        assert "<html>" in bad.failure.body
        server.script = [slow(1.0, Reply("late")) for _ in range(3)]
        late = _ask(_call(server.url, timeout_s=0.2))
        assert late.timed_out and late.attempts == 3
        assert late.cause == "timeout: no answer within 0.2 s"


def test_retry_after_is_obeyed_up_to_the_cap() -> None:
    with scripted_server() as server:
        server.script = [rate_limited(0.2), Reply("after the wait")]
        t0 = time.monotonic()
        assert _ask(_call(server.url)).attempts == 2
        assert time.monotonic() - t0 >= 0.2
        server.script = [rate_limited(30), Reply("after the cap")]
        t0 = time.monotonic()
        result = _ask(_call(server.url))
        assert result.reply is not None and time.monotonic() - t0 < 5  # 0.3 s cap, not 30 s
        server.script = [rate_limited(0) for _ in range(3)]
        limited = _ask(_call(server.url))
        assert limited.failure is not None and limited.failure.status == 429
        assert limited.attempts == 3


def test_unreachable_and_a_key_in_the_failure_is_redacted() -> None:
    down = _ask(_call("http://127.0.0.1:9/v1"))
    assert down.failure is not None and down.failure.kind == "unreachable"
    assert down.failure.error == "ConnectError" and down.attempts == 3
    with serving(Scripted([Reply(status=401, body='{"error": "bad key sk-client-test-42"}')])) as s:
        failed = _ask(_call(s.url))
    assert failed.failure is not None and "sk-client-test-42" not in failed.failure.body
    assert "[redacted]" in failed.failure.body
    assert s.requests[0].headers["authorization"] == "Bearer sk-client-test-42"


def test_images_go_to_both_apis_and_the_truth_answerer_reads_them() -> None:
    frame = b"\x89PNG one frame"
    question = Message(
        "user", (Text("Criterion R2 (relation): feet on the pedals?"), Image(frame, "image/png"))
    )
    messages = (Message.text("system", "you judge"), question)
    truth = FrameTruth({sha256(frame): {"R2": "fail"}})
    with serving(truth) as server:
        for api in ("openai", "anthropic"):
            result = _ask(_call(server.url, api, messages=messages))
            assert result.reply is not None and '"status": "fail"' in result.reply.text
            assert result.reply.usage.input_tokens == 1000
    openai, anthropic = server.requests
    assert openai.path == "/v1/chat/completions" and anthropic.path == "/v1/messages"
    assert openai.json["messages"][0] == {"role": "system", "content": "you judge"}
    assert anthropic.json["system"] == "you judge" and len(anthropic.json["messages"]) == 1
    assert openai.images() == anthropic.images() == [frame]
    assert truth.asked == [("R2", (sha256(frame),))] * 2


def test_pairwise_fail_first_and_a_body_that_is_no_request() -> None:
    pair = Pairwise(quality={sha256(b"y"): 2})
    answer = FailFirst(rate_limited(0), pair, times=1)
    parts = (Text("Drawing X, frame:"), Image(b"x"), Text("Drawing Y, frame:"), Image(b"y"))
    with serving(answer) as server:
        result = _ask(_call(server.url, messages=(Message("user", parts),)))
        with Http() as http:
            bad = http.post(f"{server.url}/v1/chat/completions", content=b"not json")
    assert result.attempts == 2 and result.reply is not None
    assert '"winner": "Y"' in result.reply.text
    assert bad.status_code == 400


def test_installed_limiters_stack_and_a_closed_one_never_stays_in_force() -> None:
    """Two installers closing out of order (A, B opened; A closed, then B): once both are
    closed, the in-process limiter is in force again, never a closed installer's."""
    settings = Settings()
    own = limiter_for(settings)
    first, second = LocalLimiter(1), LocalLimiter(2)
    before_first = install_limiter(first)
    before_second = install_limiter(second)
    assert before_first is None and before_second is first
    assert limiter_for(settings) is second
    uninstall_limiter(first, before_first)  # as ServiceContext.close does
    assert limiter_for(settings) is second
    uninstall_limiter(second, before_second)
    assert limiter_for(settings) is own
