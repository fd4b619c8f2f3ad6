"""The ``vision-llm`` judge: one criterion per request to a vision model.

Speaks the OpenAI-compatible chat-completions API and the Anthropic messages API through
:mod:`regua.llm` (one base URL with or without ``/v1``, :mod:`regua.llm.endpoint`). Base URL,
model and key come from the profile (``params.base_url``, ``model``, ``params.api_key_env``:
the name of an environment variable holding the key) or from settings
(``REGUA_JUDGE_BASE_URL``, ``REGUA_JUDGE_MODEL``, ``REGUA_JUDGE_API_KEY``). Retries follow the
profile (``max_retries``, ``backoff_s``; ``Retry-After`` obeyed up to ``max_retry_wait_s``); a
call that gets no reply or an unusable reply is a :class:`JudgeFailure`. The key is never
logged nor copied into an error.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import time
from collections.abc import Sequence

from judges.adjudication_record import AdjudicatorReply, PeerAnswer
from judges.inputs import FrameImage, JudgeInput
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict, VerdictStatus
from judges.vision.adjudicate import (
    ADJUDICATION_PROMPT_VERSION,
    adjudication_messages,
    prompt_record,
)
from judges.vision.calls import ask, failed_call
from judges.vision.levels import level_messages, level_version, parse_level_answer
from judges.vision.prompt import (
    ReplyError,
    judge_messages,
    parse_answer,
    pick_frames,
    split_template,
)
from regua.llm.call import Message, ModelCall, Usage
from regua.llm.client import RetryPolicy
from regua.llm.endpoint import api_base
from regua.llm.prices import cost_of, load_prices
from regua.settings import Settings
from tasks import Criterion, TaskSpec

log = logging.getLogger(__name__)

APIS = ("openai", "anthropic")


def effective_profile(profile: JudgeProfile, settings: Settings | None) -> JudgeProfile:
    """The profile with its model filled in from settings when the profile leaves it open.

    The model is part of the judge's identity, so a profile completed from settings gets its own
    id ``NAME+MODEL@VERSION`` (e.g. ``vision-llm-openai+llava-13b@1``) and its own content hash.
    """
    if profile.model or settings is None or not settings.judge_model:
        return profile
    name, _, version = profile.id.partition("@")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", settings.judge_model).strip("-")
    return dataclasses.replace(
        profile, id=f"{name}+{slug}@{version}", model=settings.judge_model, expected_hash=None
    )


class VisionJudge:
    """A vision-LLM judge bound to one profile and one endpoint."""

    def __init__(self, profile: JudgeProfile, settings: Settings | None = None) -> None:
        """Resolve the endpoint, key, timeouts and retry policy from the profile and settings.

        Profile parameters win over ``settings``.
        """
        self.profile = effective_profile(profile, settings)
        params = self.profile.params
        self.api = str(params.get("api", "openai"))
        if self.api not in APIS:
            raise ValueError(f"vision-llm api must be openai or anthropic, not {self.api!r}")
        base = params.get("base_url") or (settings.judge_base_url if settings else None)
        self.base_url = api_base(self.api, str(base) if base else None)
        key_env = params.get("api_key_env")
        env_key = os.environ.get(str(key_env)) if key_env else None
        self._api_key = env_key or (settings.judge_api_key if settings else None)
        timeout = params.get("timeout_s") or (settings.judge_timeout_s if settings else 60.0)
        self.timeout_s = float(timeout)
        max_wait = float(params.get("max_retry_wait_s", 30.0))
        self.policy = RetryPolicy(
            max_attempts=int(params.get("max_retries", 3)) + 1,
            backoff_s=float(params.get("backoff_s", 0.5)),
            max_backoff_s=max_wait,
            max_retry_after_s=max_wait,
        )
        self.max_frames = int(params.get("max_frames", 8))
        skip = params.get("skip_criteria", ("F1",))
        self.skip = frozenset(str(c) for c in skip)
        self._settings = settings
        self._prices = load_prices(settings.price_table) if settings else None  # a bad file fails
        split_template(self.profile.prompt_template)  # a malformed template fails early

    def __repr__(self) -> str:
        """Profile, API and base URL; never the API key."""
        return f"VisionJudge(profile={self.profile.id!r}, api={self.api!r}, base={self.base_url!r})"

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """Every criterion except the delivery rules (F1), which are decided statically."""
        del task  # Judge protocol; which criteria are skipped does not depend on the task
        return criterion.id not in self.skip

    def _messages(
        self,
        inp: JudgeInput,
        frames: list[FrameImage],
        answers: Sequence[PeerAnswer] | None = None,
    ) -> tuple[Message, ...]:
        """The judge's own question, a level question on a graded criterion, or adjudication."""
        template = self.profile.prompt_template
        if answers is not None:
            return adjudication_messages(inp.task, inp.criterion, frames, template, answers)
        if inp.criterion.graded:
            return level_messages(inp.task, inp.criterion, frames, template)
        return judge_messages(inp.task, inp.criterion, frames, template)

    def _call(self, messages: tuple[Message, ...]) -> ModelCall:
        params = self.profile.params
        return ModelCall(
            api=self.api,
            model=self.profile.model or "",
            messages=messages,
            base_url=self.base_url,
            temperature=float(params.get("temperature", 0.0)),
            max_tokens=int(params.get("max_tokens", 400)),
            timeout_s=self.timeout_s,
            api_key=self._api_key,
        )

    def _fail(
        self, inp: JudgeInput, cause: str, detail: str, started: float, raw: str | None = None
    ) -> JudgeFailure:
        ms = (time.perf_counter() - started) * 1000.0
        log.warning("judge %s on %s failed: %s", self.profile.id, inp.criterion.id, cause)
        return JudgeFailure(inp.criterion.id, self.profile.id, cause, detail, ms, raw)

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure:
        """Ask the model about one criterion (a level on a graded one) and validate its answer."""
        return self._ask(inp, None)[0]

    def adjudicate(self, inp: JudgeInput, answers: Sequence[PeerAnswer]) -> AdjudicatorReply:
        """Decide a disputed criterion having seen the other judges' anonymous answers."""
        result, prompt = self._ask(inp, answers)
        return AdjudicatorReply(result, prompt, ADJUDICATION_PROMPT_VERSION)

    def _ask(
        self, inp: JudgeInput, answers: Sequence[PeerAnswer] | None
    ) -> tuple[Verdict | JudgeFailure, str | None]:
        """One call: the verdict (or failure) and the prompt as sent (None: nothing sent)."""
        started = time.perf_counter()
        if not self.profile.model:
            return self._fail(
                inp, "not_configured", "no model (profile or REGUA_JUDGE_MODEL)", started
            ), None
        if not inp.frames:
            return self._fail(
                inp, "no_frames", "no rendered frame to show the model", started
            ), None
        shown = pick_frames(inp.frames, self.max_frames)
        messages = self._messages(inp, shown, answers)
        prompt = prompt_record(messages, shown)
        result = ask(self._call(messages), self.policy, self._settings)
        if result.reply is None:
            assert result.failure is not None
            failed = failed_call(result.failure, self.base_url, self.timeout_s)
            return self._fail(inp, failed.cause, failed.detail, started, failed.raw), prompt
        reply = result.reply
        times = [f.time_s for f in shown]
        try:
            if inp.criterion.graded:
                graded = parse_level_answer(reply.text, times, inp.criterion.levels())
                level, text, time_s = graded.level, graded.evidence, graded.time_s
                status = (
                    VerdictStatus.UNCERTAIN
                    if level is None
                    else VerdictStatus(inp.task.level_status(inp.criterion.id, level))
                )
            else:
                answer = parse_answer(reply.text, times)
                level, text, time_s, status = None, answer.evidence, answer.time_s, answer.status
        except ReplyError as exc:
            return self._fail(inp, exc.cause, str(exc), started, reply.body[:20000]), prompt
        ref = next((f.artifact_ref for f in shown if f.time_s == time_s), None)
        if ref is None and len(shown) == 1:
            ref = shown[0].artifact_ref
        details: dict[str, str] = {"api": self.api, "model": self.profile.model or ""}
        if inp.criterion.graded:
            details["prompt"] = level_version(self.profile.prompt_template)
        verdict = Verdict(
            criterion=inp.criterion.id,
            status=status,
            evidence=Evidence(ref, time_s, text),
            judge_profile_id=self.profile.id,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            usage=dict(reply.usage.raw) or None,
            cost_usd=self._cost(reply.usage),
            details=details,
            raw_reply=reply.text,
            level=level,
        )
        return verdict, prompt

    def _cost(self, usage: Usage) -> float | None:
        """Cost of one call in USD, or None when it cannot be known (never estimated).

        The provider's reported cost wins; otherwise the token counts times the price table's
        prices for this api+model (``REGUA_PRICE_TABLE``, the one table generation is priced
        from; there is no second source of prices).
        """
        if usage.reported_cost_usd is not None:
            return usage.reported_cost_usd
        return cost_of(self._prices, self.api, self.profile.model or "", usage).usd


def create_vision_judge(profile: JudgeProfile, settings: Settings | None = None) -> VisionJudge:
    """Factory registered for kind ``vision-llm``."""
    return VisionJudge(profile, settings)
