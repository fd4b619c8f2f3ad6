"""The deterministic ``mock`` provider: bundled replies, no model, no network.

The reply of a call is chosen from :data:`REPLIES` by a hash of (model, prompt, repeat,
temperature), so the same request gives the same replies on every machine. Its runs are
marked mock everywhere (model label ``mock:NAME``, provider ``mock``, ``mock: true`` in the
params and the generation record) so reports never pool them with a live model's.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import Protocol

import httpx
from pydantic import JsonValue

from regua.llm.call import ModelCall, ModelReply, Usage

REPLIES = (
    "good-fenced.txt",
    "good-in-prose.txt",
    "missing-wheel.txt",
    "prose.txt",
    "good-fenced.txt",
    "refusal.txt",
)
"""Bundled replies (good drawings, a drawing missing a wheel, prose, one refusal)."""
REFUSAL = "refusal.txt"


class Sampling(Protocol):
    """What the choice of a reply depends on besides the prompt and the repeat."""

    @property
    def model(self) -> str:
        """The model asked."""
        ...

    @property
    def temperature(self) -> float | None:
        """The temperature asked."""
        ...


def reply_name(params: Sampling, prompt: str, repeat: int) -> str:
    """Which bundled reply answers this call (deterministic)."""
    key = f"{params.model}\n{params.temperature}\n{repeat}\n{prompt}".encode()
    digest = hashlib.sha256(key).digest()
    return REPLIES[int.from_bytes(digest[:4], "big") % len(REPLIES)]


def reply_text(name: str) -> str:
    """The text of one bundled reply."""
    return (resources.files("regua.llm") / "mock_replies" / name).read_text("utf-8")


class MockProvider:
    """Answers from the bundled replies; never touches the network."""

    api = "mock"
    mock = True

    def request_params(self, call: ModelCall) -> dict[str, JsonValue]:
        """What the mock was asked (model, temperature, max_tokens) and ``mock: true``."""
        return {
            "model": call.model,
            "temperature": call.temperature,
            "max_tokens": call.max_tokens,
            "mock": True,
        }

    def send(self, http: httpx.Client, call: ModelCall) -> ModelReply:
        """The bundled reply for this call; word counts stand in for tokens."""
        del http  # no network
        prompt = call.prompt_text()
        name = reply_name(call, prompt, call.repeat)
        text = reply_text(name)
        return ModelReply(
            text=text,
            usage=Usage(len(prompt.split()), len(text.split())),
            finish_reason="stop",
            refusal=name == REFUSAL,
            body=text,
        )
