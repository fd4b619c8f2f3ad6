"""A vision judge's failure never keeps a key: neither one the server echoes in its error body,
nor the credentials of a base URL (the failure's raw reply and detail are stored and shown)."""

from __future__ import annotations

import json

from judges import JudgeFailure, JudgeProfile
from judges.inputs import FrameImage, JudgeInput
from judges.pairwise.model import PairFailure, PairInput
from judges.pairwise.vision import VisionPairwiseJudge
from judges.vision.judge import VisionJudge
from regua.llm.testing import Answerer, Reply, Request, serving
from regua.settings import Settings
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@1")
KEY = "sk-judge-echo-77aa55"
FRAMES = (FrameImage(0.0, b"\x89PNG frame", "frame-0.png"),)


def echo(request: Request) -> Reply:
    """A 500 quoting the headers it got."""
    sent = {k: v for k, v in request.headers.items() if k in ("authorization", "x-api-key")}
    return Reply(status=500, body=json.dumps({"error": {"message": f"you sent {sent}"}}))


def test_an_echoed_key_and_url_credentials_never_reach_a_judge_failure() -> None:
    answer: Answerer = echo
    with serving(answer) as server:
        host = server.url.removeprefix("http://")
        for api in ("openai", "anthropic"):
            profile = JudgeProfile(
                id=f"vision-echo-{api}@1",
                kind="vision-llm",
                model="vision-x",
                params={"api": api, "base_url": f"http://user:{KEY}-url@{host}", "backoff_s": 0},
            )
            result = VisionJudge(profile, Settings(judge_api_key=KEY)).judge(
                JudgeInput(TASK, TASK.criterion("R2"), FRAMES)
            )
            assert isinstance(result, JudgeFailure) and result.cause == "api_error"
            assert result.raw_reply is not None and "[redacted]" in result.raw_reply
            stored = json.dumps(result.to_dict())
            assert KEY not in stored and "[redacted]@" in result.detail
        pair = VisionPairwiseJudge(
            Settings(judge_base_url=server.url, judge_model="m", judge_api_key=KEY), max_retries=0
        ).compare(PairInput(TASK, TASK.criterion("B1"), FRAMES, FRAMES))
    assert isinstance(pair, PairFailure) and pair.raw_reply is not None
    assert KEY not in pair.raw_reply and "[redacted]" in pair.raw_reply
    assert any(r.headers.get("x-api-key") == KEY for r in server.requests)  # it was sent
