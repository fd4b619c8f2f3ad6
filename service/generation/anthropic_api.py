"""The Anthropic messages API."""

from __future__ import annotations

import httpx
from pydantic import JsonValue

from service.generation.http import count, post_json
from service.generation.provider import ProviderCall, ProviderReply
from service.generation.request import GenerationParams

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""The messages API requires ``max_tokens``; this is sent when none is given."""


class AnthropicMessages:
    """``POST {base_url}/messages`` with one user message."""

    api = "anthropic"
    mock = False

    def request_params(self, params: GenerationParams) -> dict[str, JsonValue]:
        """Model, max_tokens (required by the API) and temperature when set."""
        body: dict[str, JsonValue] = {
            "model": params.model,
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if params.temperature is not None:
            body["temperature"] = params.temperature
        return body

    def send(self, http: httpx.Client, call: ProviderCall) -> ProviderReply:
        """One message; the text blocks joined (a refusal's text, if any, is the reply)."""
        body = self.request_params(call.params)
        body["messages"] = [{"role": "user", "content": call.prompt}]
        headers = {"anthropic-version": API_VERSION}
        if call.api_key:
            headers["x-api-key"] = call.api_key
        base = (call.params.base_url or DEFAULT_BASE_URL).rstrip("/")
        doc = post_json(http, f"{base}/messages", body, headers, call.params.timeout_s)
        blocks = doc.get("content") if isinstance(doc.get("content"), list) else []
        assert isinstance(blocks, list)
        text = "".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        stop = doc.get("stop_reason")
        return ProviderReply(
            text=text,
            input_tokens=count(usage.get("input_tokens")),
            output_tokens=count(usage.get("output_tokens")),
            finish_reason=str(stop) if stop is not None else None,
            refusal=stop == "refusal",
        )
