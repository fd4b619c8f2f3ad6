"""The Anthropic messages API."""

from __future__ import annotations

import base64

import httpx
from pydantic import JsonValue

from regua.llm.call import Message, ModelCall, ModelReply, Part, Text, usage_of
from regua.llm.endpoint import endpoint_url
from regua.llm.http import post_json

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""The messages API requires ``max_tokens``; this is sent when none is given."""


def _part(part: Part) -> dict[str, JsonValue]:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    data = base64.b64encode(part.data).decode("ascii")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": part.media_type, "data": data},
    }


def _message(message: Message) -> dict[str, JsonValue]:
    text = message.only_text()
    content: JsonValue = text if text is not None else [_part(p) for p in message.parts]
    return {"role": message.role, "content": content}


class AnthropicMessages:
    """``POST {base}/messages``: a system turn goes to ``system``, the others to ``messages``."""

    api = "anthropic"
    mock = False

    def request_params(self, call: ModelCall) -> dict[str, JsonValue]:
        """Model, max_tokens (required by the API) and temperature when set."""
        body: dict[str, JsonValue] = {
            "model": call.model,
            "max_tokens": call.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if call.temperature is not None:
            body["temperature"] = call.temperature
        return body

    def send(self, http: httpx.Client, call: ModelCall) -> ModelReply:
        """One message; the text blocks joined (a refusal's text, if any, is the reply)."""
        body = self.request_params(call)
        system = call.system_text()
        if system is not None:
            body["system"] = system
        body["messages"] = [_message(m) for m in call.messages if m.role != "system"]
        headers = {"anthropic-version": API_VERSION}
        if call.api_key:
            headers["x-api-key"] = call.api_key
        if call.idempotency_key:
            headers["Idempotency-Key"] = call.idempotency_key
        url = endpoint_url(self.api, call.base_url)
        doc, raw = post_json(http, url, body, headers, call.timeout_s)
        blocks = doc.get("content") if isinstance(doc.get("content"), list) else []
        assert isinstance(blocks, list)
        text = "".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        stop = doc.get("stop_reason")
        return ModelReply(
            text=text,
            usage=usage_of(doc.get("usage")),
            finish_reason=str(stop) if stop is not None else None,
            refusal=stop == "refusal",
            body=raw,
        )
