"""The ``vision-llm`` pairwise judge: one order of a pair per request to a vision model.

Speaks the OpenAI-compatible chat-completions API through :mod:`regua.llm` (the base URL with
or without ``/v1``), with the endpoint, model and key from settings (``REGUA_JUDGE_BASE_URL``,
``REGUA_JUDGE_MODEL``, ``REGUA_JUDGE_API_KEY``). Retried like every model call (429, 5xx,
timeouts; ``Retry-After`` obeyed up to 30 s); a call with no reply, or a reply that is not
``{"winner": ..., "reason": ...}``, is a :class:`PairFailure`. The key is never logged nor
copied into a failure.
"""

from __future__ import annotations

import re
import time

from judges.pairwise.model import PairAnswer, PairFailure, PairInput
from judges.pairwise.prompt import pair_messages, parse_pair_answer
from judges.vision.calls import ask, failed_call
from judges.vision.prompt import ReplyError
from regua.llm.call import ModelCall
from regua.llm.client import RetryPolicy
from regua.llm.endpoint import api_base
from regua.settings import Settings

KIND = "vision-llm"
VERSION = 1
API = "openai"
MAX_TOKENS = 300


class VisionPairwiseJudge:
    """A pairwise vision-LLM judge bound to one endpoint and model."""

    def __init__(
        self, settings: Settings | None, *, max_frames: int = 4, max_retries: int = 2
    ) -> None:
        """Resolve endpoint, model, key and timeout from ``settings``."""
        self.base_url = api_base(API, settings.judge_base_url if settings else None)
        self.model = (settings.judge_model if settings else None) or ""
        self._api_key = settings.judge_api_key if settings else None
        self.timeout_s = settings.judge_timeout_s if settings else 60.0
        self.max_frames = max_frames
        self.policy = RetryPolicy(max_retries + 1, 0.2, 30.0, 30.0)
        self._settings = settings
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-") or "unset"
        self.judge_id = f"pairwise-{KIND}+{slug}@{VERSION}"

    def __repr__(self) -> str:
        """Judge id and endpoint; never the API key."""
        return f"VisionPairwiseJudge({self.judge_id!r}, base={self.base_url!r})"

    def missing_setting(self) -> str | None:
        """The setting to fix before this judge can answer (None when configured)."""
        return None if self.model else "REGUA_JUDGE_MODEL"

    def compare(self, inp: PairInput) -> PairAnswer | PairFailure:
        """Ask the model which of X and Y meets the criterion better, and validate the answer."""
        started = time.perf_counter()
        if not self.model:
            return PairFailure("not_configured", "no model: set REGUA_JUDGE_MODEL")
        if not inp.x or not inp.y:
            return PairFailure("no_frames", "both drawings need at least one rendered frame")
        call = ModelCall(
            api=API,
            model=self.model,
            messages=pair_messages(inp, self.max_frames),
            base_url=self.base_url,
            temperature=0.0,
            max_tokens=MAX_TOKENS,
            timeout_s=self.timeout_s,
            api_key=self._api_key,
        )
        result = ask(call, self.policy, self._settings)
        if result.reply is None:
            assert result.failure is not None
            failed = failed_call(result.failure, self.base_url, self.timeout_s)
            return PairFailure(failed.cause, failed.detail, failed.raw)
        try:
            winner, reason = parse_pair_answer(result.reply.text)
        except ReplyError as exc:
            return PairFailure(exc.cause, str(exc), result.reply.body[:20000])
        ms = (time.perf_counter() - started) * 1000.0
        return PairAnswer(winner, reason, result.reply.text, ms)


def create_vision_pairwise(settings: Settings | None) -> VisionPairwiseJudge:
    """Factory registered for the pairwise kind ``vision-llm``."""
    return VisionPairwiseJudge(settings)
