"""A vision judge and a generation pointed at ONE local fake model server by the same base URL
(one with ``/v1``, the other without): both reach the same path, both wait out the server's
``Retry-After``, and both are counted by one limiter (one slot at a time for the endpoint)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from judges import JudgeFailure, JudgeProfile, Verdict
from judges.inputs import FrameImage, JudgeInput
from judges.vision.judge import VisionJudge
from regua.llm.endpoint import limit_key
from regua.llm.limits import settings_limiter
from regua.llm.testing import FakeModelServer, Reply, Request, rate_limited, serving
from service.context import ServiceContext
from service.generation.request import GenerationParams
from service.generation.runner import generate_runs
from tasks import bundled_registry
from tests.service.generation.helpers import stored

TASK = bundled_registry().get("pelican-bicycle-structured@1")
SVG = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()
RETRY_AFTER_S = 1.0
ANSWER_S = 0.3
"""Each answer takes this long, so two callers not sharing one limiter would overlap."""


def _kind(request: Request) -> str:
    return "judge" if request.images() else "generation"


class JudgeOrWriter:
    """A model that first answers each kind of caller 429 (``Retry-After: 1``), then answers:
    requests with images are a judge's (a JSON verdict), the others a generation's (an SVG)."""

    def __init__(self) -> None:
        self.refused: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        kind = _kind(request)
        with self.lock:
            first = kind not in self.refused
            self.refused.add(kind)
        if first:
            return rate_limited(RETRY_AFTER_S)
        if kind == "judge":
            verdict = {"status": "pass", "evidence": "both feet on the pedals", "time_s": None}
            return Reply(json.dumps(verdict), delay_s=ANSWER_S)
        return Reply(f"```svg\n{SVG}```", delay_s=ANSWER_S)


@pytest.mark.parametrize(("judge_suffix", "generation_suffix"), [("", "/v1"), ("/v1/", "")])
def test_a_judge_and_a_generation_share_one_path_retry_rule_and_limiter(
    gen_ctx: ServiceContext, judge_suffix: str, generation_suffix: str
) -> None:
    gen_ctx.settings = gen_ctx.settings.model_copy(update={"generation_concurrency": 1})
    with serving(JudgeOrWriter()) as server:
        judge = VisionJudge(
            JudgeProfile(
                id="vision-one-client@1",
                kind="vision-llm",
                model="vision-x",
                params={
                    "api": "openai",
                    "base_url": server.url + judge_suffix,
                    "backoff_s": 0.01,  # without Retry-After it would wait 10 ms
                    "max_retry_wait_s": 5.0,
                },
            ),
            gen_ctx.settings,
        )
        frames = (FrameImage(0.0, b"\x89PNG one frame", "frame-0.png"),)
        inp = JudgeInput(TASK, TASK.criterion("R2"), frames)
        verdicts: list[Verdict | JudgeFailure] = []
        judging = threading.Thread(target=lambda: verdicts.append(judge.judge(inp)))
        judging.start()
        params = GenerationParams(api="openai", model="m", base_url=server.url + generation_suffix)
        (run_id,) = generate_runs(gen_ctx, TASK.ref, params, 1, token_id=None)
        judging.join(30)
        _check(server, verdicts, gen_ctx, run_id)


def _check(
    server: FakeModelServer[JudgeOrWriter],
    verdicts: list[Verdict | JudgeFailure],
    ctx: ServiceContext,
    run_id: str,
) -> None:
    (verdict,) = verdicts
    assert isinstance(verdict, Verdict) and verdict.status.value == "pass"
    generation = stored(ctx, run_id).generation
    assert generation.attempts == 2 and generation.cause is None  # the 429, then the answer
    assert {r.path for r in server.requests} == {"/v1/chat/completions"}  # one path for both
    for kind in ("judge", "generation"):
        refused, answered = [r.received_at for r in server.requests if _kind(r) == kind]
        assert answered - refused >= RETRY_AFTER_S * 0.95, kind  # waited the server's time
    # one limiter, one key: the four attempts were counted under the same endpoint, one at a time
    key = limit_key("openai", server.url)
    assert key == limit_key("openai", server.url + "/v1//")
    assert settings_limiter(ctx.settings).taken(key) == 4
    assert server.max_in_flight == 1
