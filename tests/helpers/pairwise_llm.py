"""A real local HTTP server imitating an OpenAI-compatible vision model asked pairwise questions.

It reads what the pairwise judge sends (the images after "Drawing X" and after "Drawing Y",
known by the sha256 of their bytes) and answers by its ``mode``: ``prefer`` names the drawing
with the higher ``quality`` (a tie when equal), ``always_x`` always answers X (a position-biased
model), ``garbage`` replies with prose instead of the JSON object.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.helpers.truthful_llm import TruthfulModel, serving


def shown_drawings(body: Any) -> tuple[list[str], list[str], str]:
    """(X image shas, Y image shas, all prompt text) of one chat-completions request."""
    x: list[str] = []
    y: list[str] = []
    texts: list[str] = []
    current = x
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content:
            if part["type"] == "text":
                texts.append(part["text"])
                if part["text"].startswith("Drawing X"):
                    current = x
                elif part["text"].startswith("Drawing Y"):
                    current = y
            else:
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                current.append(hashlib.sha256(data).hexdigest())
    return x, y, "\n".join(texts)


@dataclass
class PairwiseModel(TruthfulModel):
    """The fake pairwise model's behaviour and what it was shown."""

    mode: str = "prefer"
    quality: dict[str, int] = field(default_factory=dict)
    """Image sha256 → quality (higher wins in ``prefer`` mode)."""
    prompts: list[str] = field(default_factory=list)

    def answer(self, body: Any) -> str:
        """The reply text for one request."""
        xs, ys, text = shown_drawings(body)
        with self.lock:
            self.prompts.append(text)
        if self.mode == "garbage":
            return "Honestly the first drawing is nicer, I think."
        if self.mode == "always_x":
            return json.dumps({"winner": "X", "reason": "X comes first"})
        qx = max((self.quality.get(s, 0) for s in xs), default=0)
        qy = max((self.quality.get(s, 0) for s in ys), default=0)
        winner = "X" if qx > qy else "Y" if qy > qx else "tie"
        return json.dumps({"winner": winner, "reason": f"quality {qx} vs {qy}"})


@contextmanager
def pairwise_model(
    mode: str = "prefer", quality: dict[str, int] | None = None
) -> Iterator[PairwiseModel]:
    """Serve a :class:`PairwiseModel` on an ephemeral loopback port for the duration."""
    with serving(PairwiseModel(mode=mode, quality=dict(quality or {}))) as model:
        yield model
