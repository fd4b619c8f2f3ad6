"""Reading back what a generation stored."""

from __future__ import annotations

import json
from dataclasses import dataclass

from regua.views.submissions import GenerationView
from service.context import ServiceContext
from service.generation.store import generation_view
from service.storage import Artifact, Run


@dataclass(frozen=True)
class Stored:
    """One generated run as stored: the run row's model fields, its raw reply, its record."""

    label: str
    provider: str | None
    params: dict[str, object]
    raw: str
    generation: GenerationView


def stored(ctx: ServiceContext, run_id: str) -> Stored:
    """The stored run ``run_id``."""
    with ctx.db.read() as s:
        run = s.get(Run, run_id)
        assert run is not None and run.raw_artifact_id is not None
        art = s.get(Artifact, run.raw_artifact_id)
        assert art is not None
        gen = generation_view(s, run_id)
        assert gen is not None
        return Stored(
            run.model_label,
            run.model_provider,
            dict(run.model_params or {}),
            ctx.blobs.get(art.sha256).decode("utf-8"),
            gen,
        )


def openai_body(content: str | None, *, refusal: str | None = None, finish: str = "stop") -> str:
    """A chat-completions answer with usage 1200 in / 40 out."""
    message: dict[str, object] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return json.dumps(
        {
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 40},
        }
    )
