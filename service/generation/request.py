"""What a generation asks of a model: the API, the model and the request parameters."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from regua.llm.call import Message, ModelCall
from regua.records import field_dict

Api = Literal["openai", "anthropic", "mock"]
VENDOR_HOSTS = {"api.openai.com": "openai", "api.anthropic.com": "anthropic"}
"""Hosts of the APIs' own vendors, named as when no base URL is given."""
_CALL_FIELDS = ("api", "model", "base_url", "temperature", "max_tokens", "timeout_s")
"""The parameters a model call takes over as they are."""


def http_base_url(value: str | None) -> str | None:
    """A base URL is http(s)://HOST[...]: anything else could never be called (ValueError)."""
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError(f"base_url must start with http:// or https:// (got {value!r})")
    return value


class GenerationParams(BaseModel, frozen=True):
    """One model configuration to generate with (the API key is named, never held)."""

    api: Api
    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = Field(default=None, max_length=2000)
    api_key_env: str | None = Field(
        default=None,
        max_length=200,
        description="Name of the environment variable holding the API key (never the key)",
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    label: str | None = Field(default=None, max_length=200)
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    provider: str | None = Field(
        default=None,
        max_length=200,
        description="Who serves the model (the vendor); default: the base URL's host, else the API",
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return http_base_url(value)

    @property
    def is_mock(self) -> bool:
        """Whether the bundled mock answers (its runs never pool with live ones)."""
        return self.api == "mock"

    def vendor(self) -> str:
        """The run's provider: as given, else the base URL's host, else the API's name.

        Two OpenAI-compatible servers are two providers (``127.0.0.1:8001`` is not
        ``api.openai.com``), so "a judge never judges its own provider's output" can hold for
        locally served models.
        """
        if self.provider:
            return self.provider
        host = urlsplit(self.base_url).netloc.rpartition("@")[2].lower() if self.base_url else ""
        return VENDOR_HOSTS.get(host, host) or self.api

    def model_label(self) -> str:
        """The run's model label: the label (default: the model), ``mock:`` first for the mock."""
        name = self.label or self.model
        return f"mock:{name}" if self.is_mock else name

    def model_call(
        self, prompt: str, repeat: int, api_key: str | None, idempotency_key: str | None = None
    ) -> ModelCall:
        """The call of one repeat: the prompt as the one user turn."""
        return ModelCall(
            **field_dict(self, *_CALL_FIELDS),
            messages=(Message.text("user", prompt),),
            repeat=repeat,
            api_key=api_key,
            idempotency_key=idempotency_key,
        )
