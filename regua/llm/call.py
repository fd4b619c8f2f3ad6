"""What a model is asked (:class:`ModelCall`: messages of content parts) and what it answered.

A message is a list of parts, text or an image (PNG bytes and a media type), so one call type
serves generation (one user text) and the vision judges (a system text, then the question and
the frames with their captions). The API key travels with the call and never leaves it: it is
not in its ``repr``, in any record or in any error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Text:
    """A text part."""

    text: str


@dataclass(frozen=True)
class Image:
    """An image part: its bytes and media type (the judges send PNG frames)."""

    data: bytes = field(repr=False)
    media_type: str = "image/png"


Part = Text | Image


@dataclass(frozen=True)
class Message:
    """One turn: who speaks and the parts said, in order."""

    role: Role
    parts: tuple[Part, ...]

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        """A turn of one text part."""
        return cls(role, (Text(text),))

    def only_text(self) -> str | None:
        """The text of a turn made of one text part (sent as a plain string), else None."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Text):
            return self.parts[0].text
        return None

    def joined_text(self) -> str:
        """Every text part of the turn, joined by newlines (images left out)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, Text))


@dataclass(frozen=True)
class ModelCall:
    """One request to a model: the API, where, the model, the turns and the sampling."""

    api: str
    model: str
    messages: tuple[Message, ...]
    base_url: str | None = None
    """With or without the trailing ``/v1`` (:func:`regua.llm.endpoint.api_base`)."""
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 120.0
    repeat: int = 1
    """Which repeat of the same request this is (the mock's replies vary by it)."""
    api_key: str | None = field(default=None, repr=False)
    idempotency_key: str | None = None
    """Sent as ``Idempotency-Key`` (the same for every attempt and every resumption of one
    case), so a provider that honours it answers a call sent again only once."""

    def system_text(self) -> str | None:
        """The system turns' text (None without one)."""
        texts = [m.joined_text() for m in self.messages if m.role == "system"]
        return "\n".join(texts) if texts else None

    def prompt_text(self) -> str:
        """The text of the non-system turns, joined by newlines."""
        return "\n".join(m.joined_text() for m in self.messages if m.role != "system")


@dataclass(frozen=True)
class Usage:
    """What a call used, as the provider reported it (None: not reported).

    ``raw`` is the provider's usage object as sent (judges keep it with their verdict);
    ``reported_cost_usd`` is a cost the provider states itself (e.g. OpenRouter's ``cost``).
    A cost from regua's price table is :func:`regua.llm.prices.cost_of`.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    reported_cost_usd: float | None = None
    raw: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelReply:
    """What a model answered. A refusal or an empty text is a reply too."""

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    refusal: bool = False
    body: str = ""
    """The response body as received (judges keep it when the text is not a valid answer)."""


def count(value: object) -> int | None:
    """A token count from a usage field (None when absent or not a whole number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


INPUT_TOKENS = ("prompt_tokens", "input_tokens")
OUTPUT_TOKENS = ("completion_tokens", "output_tokens")


def _first(doc: Mapping[str, JsonValue], names: tuple[str, ...]) -> int | None:
    return next((n for n in (count(doc.get(k)) for k in names) if n is not None), None)


def usage_of(raw: object) -> Usage:
    """The :class:`Usage` of a provider's usage object (OpenAI's or Anthropic's field names)."""
    doc: dict[str, JsonValue] = dict(raw) if isinstance(raw, dict) else {}
    cost = doc.get("cost")
    reported = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return Usage(_first(doc, INPUT_TOKENS), _first(doc, OUTPUT_TOKENS), reported, doc)
