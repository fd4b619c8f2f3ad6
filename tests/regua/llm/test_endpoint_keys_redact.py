"""The base-URL rule, the limiter key, key bindings and the redaction step (pure functions)."""

from __future__ import annotations

import pytest

from regua.llm.endpoint import api_base, endpoint_url, limit_key, same_endpoint
from regua.llm.keys import KeyBinding, may_send, parse_binding, parse_bindings
from regua.llm.redact import Redactor


@pytest.mark.parametrize(
    "base",
    [
        "http://h:8000",
        "http://h:8000/",
        "http://h:8000/v1",
        "http://h:8000/v1/",
        "http://h:8000/v1//",
        " HTTP://H:8000/v1 ",
        "http://h:8000/v1/chat/completions",
    ],
)
def test_one_endpoint_with_or_without_v1(base: str) -> None:
    assert api_base("openai", base) == "http://h:8000/v1"
    assert endpoint_url("openai", base) == "http://h:8000/v1/chat/completions"
    assert limit_key("openai", base) == "openai http://h:8000/v1"


def test_defaults_versions_and_full_endpoints() -> None:
    assert endpoint_url("openai", None) == "https://api.openai.com/v1/chat/completions"
    assert endpoint_url("anthropic", "https://api.anthropic.com") == (
        "https://api.anthropic.com/v1/messages"
    )
    assert endpoint_url("anthropic", None) == "https://api.anthropic.com/v1/messages"
    assert endpoint_url("openai", "https://h:443/api/v2") == "https://h/api/v2/chat/completions"
    assert endpoint_url("openai", "https://openrouter.ai/api") == (
        "https://openrouter.ai/api/v1/chat/completions"
    )
    # a path without a version segment is reached by naming the endpoint itself
    gemini = "https://g.example/v1beta/openai/chat/completions"
    assert endpoint_url("openai", gemini) == gemini
    assert same_endpoint("anthropic", None, "https://api.anthropic.com/v1/")
    assert not same_endpoint("openai", "http://h:8000/v1", "http://h:8001/v1")
    assert limit_key("openai", "http://a/v1") != limit_key("anthropic", "http://a/v1")
    assert limit_key("mock", None) == "mock"


def test_key_bindings_parse_and_pair() -> None:
    assert parse_binding("OPENAI_API_KEY=openai") == KeyBinding("OPENAI_API_KEY", "openai")
    local = parse_binding(" VLLM_KEY = openai @ http://gpu:8000 ")
    assert local == KeyBinding("VLLM_KEY", "openai", "http://gpu:8000")
    bindings = parse_bindings(["OPENAI_API_KEY=openai", "VLLM_KEY=openai@http://gpu:8000/v1"])
    assert may_send(bindings, "OPENAI_API_KEY", "openai", "https://api.openai.com/v1/")
    assert not may_send(bindings, "OPENAI_API_KEY", "anthropic", None)  # not to another API
    assert not may_send(bindings, "OPENAI_API_KEY", "openai", "http://gpu:8000/v1")
    assert may_send(bindings, "VLLM_KEY", "openai", "http://gpu:8000")
    for bad in (
        "OPENAI_API_KEY",
        "=openai",
        "K=openai@",
        "K=openai@ftp://x",
        "1K=openai",
        "K=Open",
    ):
        with pytest.raises(ValueError, match=r"VAR=API|http://"):
            parse_binding(bad)


def test_redaction_removes_keys_header_echoes_and_url_credentials() -> None:
    redact = Redactor(["sk-live-0123456789", "tiny"])  # too short to be matched
    text = (
        "401: got {'authorization': 'Bearer sk-live-0123456789'}, x-api-key: ak-other-998877, "
        '"Api-Key"="zz-9-top-secret" at https://bob:pw-42@h/v1; key sk-live-0123456789 again; '
        "tiny stays; the bearer of bad news stays; Bearer tok_ABCDEFGH12345 goes"
    )
    clean = redact(text)
    for secret in ("sk-live-0123456789", "ak-other-998877", "zz-9-top-secret", "pw-42", "12345"):
        assert secret not in clean
    assert "https://[redacted]@h/v1" in clean and "tiny stays" in clean
    assert "the bearer of bad news stays" in clean
    assert redact.with_secrets("another-secret-1")("x another-secret-1") == "x [redacted]"
    assert redact.optional(None) is None
