"""The OpenAI-compatible chat completions API (vLLM, Ollama, OpenRouter, OpenAI)."""

from __future__ import annotations

import httpx
from pydantic import JsonValue

from service.generation.http import count, post_json
from service.generation.provider import ProviderCall, ProviderHttpError, ProviderReply
from service.generation.request import GenerationParams

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChat:
    """``POST {base_url}/chat/completions`` with one user message."""

    api = "openai"
    mock = False

    def request_params(self, params: GenerationParams) -> dict[str, JsonValue]:
        """Model, and temperature / max_tokens when set."""
        body: dict[str, JsonValue] = {"model": params.model}
        if params.temperature is not None:
            body["temperature"] = params.temperature
        if params.max_tokens is not None:
            body["max_tokens"] = params.max_tokens
        return body

    def send(self, http: httpx.Client, call: ProviderCall) -> ProviderReply:
        """One chat completion; a refusal (``message.refusal``) is the reply's text."""
        body = self.request_params(call.params)
        body["messages"] = [{"role": "user", "content": call.prompt}]
        headers = {"Authorization": f"Bearer {call.api_key}"} if call.api_key else {}
        base = (call.params.base_url or DEFAULT_BASE_URL).rstrip("/")
        doc = post_json(http, f"{base}/chat/completions", body, headers, call.params.timeout_s)
        choices = doc.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderHttpError("bad_reply: no choices in the answer", retryable=False)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        assert isinstance(message, dict)
        content, refusal = message.get("content"), message.get("refusal")
        text = content if isinstance(content, str) else ""
        refused = isinstance(refusal, str) and bool(refusal)
        if refused and not text:
            text = str(refusal)
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        finish = choice.get("finish_reason")
        return ProviderReply(
            text=text,
            input_tokens=count(usage.get("prompt_tokens")),
            output_tokens=count(usage.get("completion_tokens")),
            finish_reason=str(finish) if finish is not None else None,
            refusal=refused or finish == "content_filter",
        )
