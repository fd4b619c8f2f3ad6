"""The vision judge on graded criteria and as an adjudicator, against the fake model server.

A level is asked with the scale and every written anchor and read strictly; a strict profile
keeps its stance on levels. An adjudication request carries the other judges' answers and never
a judge's id, provider or model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from judges import JudgeFailure, JudgeInput, JudgeProfile, Verdict
from judges.adjudication_record import PeerAnswer
from judges.vision.judge import VisionJudge
from judges.vision.levels import LEVEL_STRICT_RULE, LEVEL_USER
from judges.vision.templates import template_text
from regua.llm.testing import (
    ByModel,
    FakeModelServer,
    FrameTruth,
    Reply,
    Scripted,
    asks_level,
    is_adjudication,
    serving,
    sha256,
)
from tasks import bundled_registry
from tests.judges.vision.test_vision_llm import FRAMES

TASK = bundled_registry().get("lighthouse-night-graded@1")


def judge(url: str, model: str, version: str = "criterion-json@1") -> VisionJudge:
    return VisionJudge(
        JudgeProfile(
            id=f"vision-{model}@1",
            kind="vision-llm",
            model=model,
            prompt_template=template_text(version),
            prompt_version=version,
            params={"api": "openai", "base_url": url, "max_retries": 0, "provider": "acme"},
        )
    )


@pytest.fixture()
def models() -> Iterator[tuple[FakeModelServer[ByModel], ByModel, FrameTruth]]:
    truth = FrameTruth(default="pass", default_level=None)
    truth.levels = {sha256(FRAMES[1].png): {"P": 4, "I": 3}}
    router = ByModel(
        {
            "grader": truth,
            "liar": Scripted([Reply(json.dumps({"level": 9, "evidence": "x", "time_s": None}))]),
        }
    )
    with serving(router) as server:
        yield server, router, truth


def test_a_level_is_asked_with_every_anchor_and_read_back(
    models: tuple[FakeModelServer[ByModel], ByModel, FrameTruth],
) -> None:
    server, router, _truth = models
    grader = judge(server.url, "grader", "criterion-json-strict@1")
    result = grader.judge(JudgeInput(TASK, TASK.criterion("I"), FRAMES))
    assert isinstance(result, Verdict), result
    assert (result.level, result.status) == (3, "fail")  # I >= 4 is the task's minimum
    assert result.details["prompt"] == "criterion-level-json@1:strict"
    (request,) = server.requests
    assert asks_level(request) and not is_adjudication(request)
    text = "\n".join(request.texts())
    for level, anchor in TASK.criterion("I").anchors.items():
        assert f"{level}: {anchor}" in text
    assert "Criterion I (necessary, graded 0..5)" in text and LEVEL_STRICT_RULE in text
    assert '"level"' in text and '"status"' not in text
    assert router.prompts("grader") == [text]


def test_null_is_uncertain_and_a_level_off_the_scale_is_a_judge_failure(
    models: tuple[FakeModelServer[ByModel], ByModel, FrameTruth],
) -> None:
    server, _router, _truth = models
    unknown = judge(server.url, "grader").judge(JudgeInput(TASK, TASK.criterion("C"), FRAMES))
    assert isinstance(unknown, Verdict) and (unknown.level, unknown.status) == (None, "uncertain")
    off = judge(server.url, "liar").judge(JudgeInput(TASK, TASK.criterion("C"), FRAMES))
    assert isinstance(off, JudgeFailure) and off.cause == "invalid_reply"
    assert "off the scale 0..5" in off.detail


def test_a_pass_fail_criterion_of_the_graded_task_is_asked_for_a_status(
    models: tuple[FakeModelServer[ByModel], ByModel, FrameTruth],
) -> None:
    server, _router, _truth = models
    result = judge(server.url, "grader").judge(JudgeInput(TASK, TASK.criterion("X1"), FRAMES))
    assert isinstance(result, Verdict) and result.status == "pass" and result.level is None
    assert not asks_level(server.requests[-1])


def test_the_adjudicator_sees_the_answers_and_never_who_gave_them(
    models: tuple[FakeModelServer[ByModel], ByModel, FrameTruth],
) -> None:
    server, router, _truth = models
    referee = judge(server.url, "grader")
    answers = (
        PeerAnswer("fail", "the boat is missing", 0.0, 2),
        PeerAnswer("pass", "every element is there", None, 5),
    )
    reply = referee.adjudicate(JudgeInput(TASK, TASK.criterion("P"), FRAMES), answers)
    assert isinstance(reply.result, Verdict) and reply.result.level == 4
    assert reply.prompt_version == "adjudication-json@1"
    (request,) = server.requests
    assert is_adjudication(request) and asks_level(request)
    sent = json.dumps(request.json)
    assert 'level 2: \\"the boat is missing\\" (frame t=0.000 s)' in sent
    assert 'level 5: \\"every element is there\\"' in sent
    for secret in ("vision-grader@1", "strict@1", "acme", "liar"):
        assert secret not in "\n".join(request.texts())
    assert reply.prompt is not None and "[image: " in reply.prompt
    assert "Answers of the other judges" in reply.prompt
    assert router.prompts("grader")[0].count("Answers of the other judges") == 1
    assert LEVEL_USER.splitlines()[0] in reply.prompt
