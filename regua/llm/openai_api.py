"""The OpenAI-compatible chat completions API (vLLM, Ollama, OpenRouter, LM Studio, OpenAI)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
from pydantic import JsonValue

from regua.llm.call import Message, ModelCall, ModelReply, Part, Text, usage_of
from regua.llm.endpoint import endpoint_url
from regua.llm.http import bad_reply, post_json


def _part(part: Part) -> dict[str, JsonValue]:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    data = base64.b64encode(part.data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{part.media_type};base64,{data}"}}


def _message(message: Message) -> dict[str, JsonValue]:
    text = message.only_text()
    content: JsonValue = text if text is not None else [_part(p) for p in message.parts]
    return {"role": message.role, "content": content}


def _choice(doc: dict[str, Any], body: str) -> dict[str, Any]:
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad_reply("no choices in the answer", body)
    return choices[0]


class OpenAIChat:
    """The chat-completions endpoint: the turns as messages, a system turn first."""

    api = "openai"
    mock = False

    def request_params(self, call: ModelCall) -> dict[str, JsonValue]:
        """Model, and temperature / max_tokens when set."""
        body: dict[str, JsonValue] = {"model": call.model}
        if call.temperature is not None:
            body["temperature"] = call.temperature
        if call.max_tokens is not None:
            body["max_tokens"] = call.max_tokens
        return body

    def send(self, http: httpx.Client, call: ModelCall) -> ModelReply:
        """One chat completion; a refusal (``message.refusal``) is the reply's text."""
        body = self.request_params(call)
        body["messages"] = [_message(m) for m in call.messages]
        headers = {"Authorization": f"Bearer {call.api_key}"} if call.api_key else {}
        if call.idempotency_key:
            headers["Idempotency-Key"] = call.idempotency_key
        url = endpoint_url(self.api, call.base_url)
        doc, raw = post_json(http, url, body, headers, call.timeout_s)
        choice = _choice(doc, raw)
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        assert isinstance(message, dict)
        content, refusal = message.get("content"), message.get("refusal")
        text = content if isinstance(content, str) else ""
        refused = isinstance(refusal, str) and bool(refusal)
        if refused and not text:
            text = str(refusal)
        finish = choice.get("finish_reason")
        return ModelReply(
            text=text,
            usage=usage_of(doc.get("usage")),
            finish_reason=str(finish) if finish is not None else None,
            refusal=refused or finish == "content_filter",
            body=raw,
        )
