"""The ``vision-llm`` pairwise judge: one order of a pair per request to a vision model over HTTP.

Speaks the OpenAI-compatible chat-completions API (:func:`judges.vision.judge.endpoint_url`), with
the endpoint, model and key from settings (``REGUA_JUDGE_BASE_URL``, ``REGUA_JUDGE_MODEL``,
``REGUA_JUDGE_API_KEY``). 429 and 5xx are retried with a short bounded backoff; a timeout, an
error status or a reply that is not ``{"winner": ..., "reason": ...}`` is a :class:`PairFailure`.
The key is never logged nor copied into a failure.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import httpx

from judges.pairwise.model import PairAnswer, PairFailure, PairInput
from judges.pairwise.prompt import openai_pair_body, parse_pair_answer
from judges.vision.judge import RETRY_STATUSES, endpoint_url
from judges.vision.prompt import ReplyError, openai_text
from regua.settings import Settings

KIND = "vision-llm"
VERSION = 1


class VisionPairwiseJudge:
    """A pairwise vision-LLM judge bound to one endpoint and model."""

    def __init__(
        self,
        settings: Settings | None,
        *,
        max_frames: int = 4,
        max_retries: int = 2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Resolve endpoint, model, key and timeout from ``settings``."""
        self.base_url = (settings.judge_base_url if settings else None) or "https://api.openai.com"
        self.model = (settings.judge_model if settings else None) or ""
        self._api_key = settings.judge_api_key if settings else None
        self.timeout_s = settings.judge_timeout_s if settings else 60.0
        self.max_frames = max_frames
        self.max_retries = max_retries
        self._sleep = sleep
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-") or "unset"
        self.judge_id = f"pairwise-{KIND}+{slug}@{VERSION}"

    def __repr__(self) -> str:
        """Judge id and endpoint; never the API key."""
        return f"VisionPairwiseJudge({self.judge_id!r}, base={self.base_url!r})"

    def _post(self, body: dict[str, object]) -> httpx.Response | PairFailure:
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        url = endpoint_url("openai", self.base_url)
        with httpx.Client(timeout=self.timeout_s) as client:
            for attempt in range(self.max_retries + 1):
                try:
                    response = client.post(url, json=body, headers=headers)
                except httpx.TimeoutException:
                    return PairFailure("timeout", f"no reply within {self.timeout_s:g}s")
                except httpx.TransportError as exc:
                    if attempt >= self.max_retries:
                        detail = f"{type(exc).__name__} talking to {self.base_url}"
                        return PairFailure("api_unreachable", detail)
                    self._sleep(0.2 * 2**attempt)
                    continue
                if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                    self._sleep(0.2 * 2**attempt)
                    continue
                return response
        raise AssertionError("unreachable")  # pragma: no cover

    def compare(self, inp: PairInput) -> PairAnswer | PairFailure:
        """Ask the model which of X and Y meets the criterion better, and validate the answer."""
        started = time.perf_counter()
        if not self.model:
            return PairFailure("not_configured", "no model: set REGUA_JUDGE_MODEL")
        if not inp.x or not inp.y:
            return PairFailure("no_frames", "both drawings need at least one rendered frame")
        response = self._post(openai_pair_body(self.model, inp, self.max_frames))
        if isinstance(response, PairFailure):
            return response
        raw = response.text
        if response.status_code >= 400:
            cause = "rate_limited" if response.status_code == 429 else "api_error"
            return PairFailure(
                cause, f"HTTP {response.status_code} from {self.base_url}", raw[:2000]
            )
        try:
            text, _usage = openai_text(response.json())
            winner, reason = parse_pair_answer(text)
        except ReplyError as exc:
            return PairFailure(exc.cause, str(exc), raw[:20000])
        except ValueError as exc:
            return PairFailure("unparseable", f"reply body is not JSON: {exc}", raw[:2000])
        ms = (time.perf_counter() - started) * 1000.0
        return PairAnswer(winner, reason, text, ms)


def create_vision_pairwise(settings: Settings | None) -> VisionPairwiseJudge:
    """Factory registered for the pairwise kind ``vision-llm``."""
    return VisionPairwiseJudge(settings)
