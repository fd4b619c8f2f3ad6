"""The ``vision-llm`` judge: one criterion per request to a vision model over HTTP.

Speaks the OpenAI-compatible chat-completions API and the Anthropic messages API. One base URL
works for both, with or without a trailing ``/v1`` (:func:`endpoint_url`): OpenAI gets
``{base}/v1/chat/completions``, Anthropic ``{base}/v1/messages``, never a doubled ``/v1``. Base URL,
model and key come from the profile (``params.base_url``, ``model``, ``params.api_key_env``:
the name of an environment variable holding the key) or from settings
(``REGUA_JUDGE_BASE_URL``, ``REGUA_JUDGE_MODEL``, ``REGUA_JUDGE_API_KEY``). Retries 429/5xx
with bounded backoff (honouring ``Retry-After``); a timeout or an unusable reply is a
:class:`JudgeFailure`. The key is never logged nor copied into an error.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

import httpx

from judges.inputs import FrameImage, JudgeInput
from judges.model import Evidence, JudgeFailure, JudgeProfile, Verdict
from judges.vision.prompt import (
    ReplyError,
    anthropic_body,
    anthropic_text,
    openai_body,
    openai_text,
    parse_answer,
    pick_frames,
    split_template,
)
from regua.settings import Settings
from tasks import Criterion, TaskSpec

log = logging.getLogger(__name__)

DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
ANTHROPIC_VERSION = "2023-06-01"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


_SUFFIXES = {"openai": "/chat/completions", "anthropic": "/messages"}


def endpoint_url(api: str, base_url: str) -> str:
    """The request URL of ``api`` on ``base_url``, which may or may not end in ``/v1``.

    Trailing slashes and an already present endpoint path are tolerated:
    ``http://h:8000``, ``http://h:8000/``, ``http://h:8000/v1`` and
    ``http://h:8000/v1/chat/completions`` all give ``http://h:8000/v1/chat/completions`` for
    ``openai``; ``https://api.anthropic.com`` and ``https://api.anthropic.com/v1`` both give
    ``https://api.anthropic.com/v1/messages``.
    """
    if api not in _SUFFIXES:
        raise ValueError(f"vision-llm api must be openai or anthropic, not {api!r}")
    base = base_url.strip().rstrip("/")
    suffix = _SUFFIXES[api]
    if base.endswith(suffix):
        base = base[: -len(suffix)].rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return f"{base}/v1{suffix}"


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

    def __init__(
        self,
        profile: JudgeProfile,
        settings: Settings | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Resolve the endpoint, key, timeouts and retry policy from the profile and settings.

        Profile parameters win over ``settings``; ``sleep`` is how retries wait (replaceable in
        tests).
        """
        self.profile = effective_profile(profile, settings)
        params = self.profile.params
        self.api = str(params.get("api", "openai"))
        if self.api not in DEFAULT_BASE:
            raise ValueError(f"vision-llm api must be openai or anthropic, not {self.api!r}")
        base = params.get("base_url") or (settings.judge_base_url if settings else None)
        self.base_url = str(base or DEFAULT_BASE[self.api]).rstrip("/")
        key_env = params.get("api_key_env")
        env_key = os.environ.get(str(key_env)) if key_env else None
        self._api_key = env_key or (settings.judge_api_key if settings else None)
        timeout = params.get("timeout_s") or (settings.judge_timeout_s if settings else 60.0)
        self.timeout_s = float(timeout)
        self.max_retries = int(params.get("max_retries", 3))
        self.backoff_s = float(params.get("backoff_s", 0.5))
        self.max_wait_s = float(params.get("max_retry_wait_s", 30.0))
        self.max_frames = int(params.get("max_frames", 8))
        skip = params.get("skip_criteria", ("F1",))
        self.skip = frozenset(str(c) for c in skip)
        self._sleep = sleep
        split_template(self.profile.prompt_template)  # a malformed template fails early

    def __repr__(self) -> str:
        """Profile, API and base URL; never the API key."""
        return f"VisionJudge(profile={self.profile.id!r}, api={self.api!r}, base={self.base_url!r})"

    def answers(self, task: TaskSpec, criterion: Criterion) -> bool:
        """Every criterion except the delivery rules (F1), which are decided statically."""
        del task  # Judge protocol; which criteria are skipped does not depend on the task
        return criterion.id not in self.skip

    def _request(
        self, inp: JudgeInput, frames: list[FrameImage]
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        model = self.profile.model or ""
        params = self.profile.params
        template = self.profile.prompt_template
        if self.api == "openai":
            headers = {"content-type": "application/json"}
            if self._api_key:
                headers["authorization"] = f"Bearer {self._api_key}"
            body = openai_body(model, inp.task, inp.criterion, frames, params, template)
            return endpoint_url("openai", self.base_url), body, headers
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        body = anthropic_body(model, inp.task, inp.criterion, frames, params, template)
        return endpoint_url("anthropic", self.base_url), body, headers

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        delay = self.backoff_s * (2**attempt)
        if response is not None:
            header = str(response.headers.get("retry-after", ""))
            if re.fullmatch(r"\s*\d+(\.\d+)?\s*", header):
                delay = float(header)
        return float(max(0.0, min(delay, self.max_wait_s)))

    def _fail(
        self, inp: JudgeInput, cause: str, detail: str, started: float, raw: str | None = None
    ) -> JudgeFailure:
        ms = (time.perf_counter() - started) * 1000.0
        log.warning("judge %s on %s failed: %s", self.profile.id, inp.criterion.id, cause)
        return JudgeFailure(inp.criterion.id, self.profile.id, cause, detail, ms, raw)

    def _post(
        self,
        inp: JudgeInput,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        started: float,
    ) -> httpx.Response | JudgeFailure:
        """POST the request, retrying transport errors and retryable statuses with backoff.

        Returns the last response (possibly an error status), or the failure when no response
        came: a timeout, or the endpoint unreachable on every attempt.
        """
        response: httpx.Response | None = None
        with httpx.Client(timeout=self.timeout_s) as client:
            for attempt in range(self.max_retries + 1):
                try:
                    response = client.post(url, json=body, headers=headers)
                except httpx.TimeoutException:
                    return self._fail(
                        inp, "timeout", f"no reply within {self.timeout_s:g}s", started
                    )
                except httpx.TransportError as exc:
                    response = None
                    if attempt >= self.max_retries:
                        detail = f"{type(exc).__name__} talking to {self.base_url}"
                        return self._fail(inp, "api_unreachable", detail, started)
                    self._sleep(self._wait(attempt, None))
                    continue
                if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                    log.info("judge %s: HTTP %s, retrying", self.profile.id, response.status_code)
                    self._sleep(self._wait(attempt, response))
                    continue
                break
        assert response is not None
        return response

    def judge(self, inp: JudgeInput) -> Verdict | JudgeFailure:
        """Ask the model about one criterion and validate its answer."""
        started = time.perf_counter()
        cid = inp.criterion.id
        if not self.profile.model:
            return self._fail(
                inp, "not_configured", "no model (profile or REGUA_JUDGE_MODEL)", started
            )
        if not inp.frames:
            return self._fail(inp, "no_frames", "no rendered frame to show the model", started)
        shown = pick_frames(inp.frames, self.max_frames)
        url, body, headers = self._request(inp, shown)
        response = self._post(inp, url, body, headers, started)
        if isinstance(response, JudgeFailure):
            return response
        raw = response.text
        if response.status_code >= 400:
            cause = "rate_limited" if response.status_code == 429 else "api_error"
            detail = f"HTTP {response.status_code} from {self.base_url}"
            return self._fail(inp, cause, detail, started, raw[:2000])
        try:
            data = response.json()
            extract = openai_text if self.api == "openai" else anthropic_text
            text, usage = extract(data)
            answer = parse_answer(text, [f.time_s for f in shown])
        except ReplyError as exc:
            return self._fail(inp, exc.cause, str(exc), started, raw[:20000])
        except ValueError as exc:
            return self._fail(
                inp, "unparseable", f"reply body is not JSON: {exc}", started, raw[:2000]
            )
        ref = next((f.artifact_ref for f in shown if f.time_s == answer.time_s), None)
        if ref is None and len(shown) == 1:
            ref = shown[0].artifact_ref
        ms = (time.perf_counter() - started) * 1000.0
        return Verdict(
            criterion=cid,
            status=answer.status,
            evidence=Evidence(ref, answer.time_s, answer.evidence),
            judge_profile_id=self.profile.id,
            latency_ms=ms,
            usage=usage or None,
            cost_usd=self._cost(usage),
            details={"api": self.api, "model": self.profile.model},
            raw_reply=text,
        )

    def _cost(self, usage: dict[str, Any]) -> float | None:
        """Cost of one call in USD, or None when it cannot be known.

        The provider's reported cost wins; otherwise it is computed from token counts and the
        profile's prices (USD per million tokens).
        """
        reported = usage.get("cost")
        if isinstance(reported, int | float) and not isinstance(reported, bool):
            return float(reported)
        price_in = self.profile.params.get("usd_per_mtok_in")
        price_out = self.profile.params.get("usd_per_mtok_out")
        if price_in is None or price_out is None:
            return None
        tin = usage.get("prompt_tokens", usage.get("input_tokens"))
        tout = usage.get("completion_tokens", usage.get("output_tokens"))
        if not isinstance(tin, int) or not isinstance(tout, int):
            return None
        return (tin * float(price_in) + tout * float(price_out)) / 1_000_000


def create_vision_judge(profile: JudgeProfile, settings: Settings | None = None) -> VisionJudge:
    """Factory registered for kind ``vision-llm``."""
    return VisionJudge(profile, settings)
