"""A real local HTTP server imitating an OpenAI-compatible vision model that says ``pass`` to
every criterion it is asked about (the lax model the gate must refuse)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.helpers.truthful_llm import TruthfulModel, serving


class PassEverythingModel(TruthfulModel):
    """Records what it is asked (as :class:`TruthfulModel` does) and always answers pass."""

    def answer(self, body: Any) -> str:
        """``pass`` whatever the frames show."""
        asked = super().answer(body)
        criterion = json.loads(asked)["evidence"].split(" ")[0]
        return json.dumps({"status": "pass", "evidence": f"{criterion} looks fine", "time_s": 0})


@contextmanager
def pass_everything_model() -> Iterator[PassEverythingModel]:
    """Serve a :class:`PassEverythingModel` on an ephemeral loopback port for the duration."""
    with serving(PassEverythingModel()) as model:
        yield model
