"""The pairwise vision judge over real HTTP, asked in both orders (a fake model on loopback)."""

from __future__ import annotations

import hashlib

import pytest

from judges.inputs import FrameImage
from judges.pairwise import PairAnswer, PairFailure, both_orders, combine, pairwise_registry
from judges.pairwise.model import PairwiseJudge
from judges.pairwise.prompt import parse_pair_answer
from judges.pairwise.vision import VisionPairwiseJudge
from judges.vision.prompt import ReplyError
from regua.errors import JudgeError
from regua.llm.testing import Pairwise, serving
from regua.settings import Settings
from tasks import bundled_registry

TASK = bundled_registry().get("pelican-bicycle-structured@1")
CRITERION = TASK.criteria[1]


def _frames(tag: str) -> tuple[FrameImage, ...]:
    data = f"png bytes of {tag}".encode()
    return (FrameImage(0.0, data, hashlib.sha256(data).hexdigest()),)


A, B = _frames("drawing a"), _frames("drawing b")


def _settings(url: str) -> Settings:
    return Settings(judge_base_url=url, judge_model="fake-vision", judge_timeout_s=5.0)


def _judge(url: str) -> PairwiseJudge:
    return pairwise_registry().create("vision-llm", _settings(url))


def test_a_consistent_preference_wins_in_both_orders_and_the_prompt_is_blind() -> None:
    with serving(Pairwise("prefer", {B[0].artifact_ref: 2, A[0].artifact_ref: 1})) as server:
        judge = _judge(server.url)
        outcome = both_orders(judge, TASK, CRITERION, A, B)
    assert outcome.result == "b" and not outcome.position_biased and outcome.failure is None
    assert isinstance(outcome.first, PairAnswer) and outcome.first.winner == "Y"
    assert isinstance(outcome.second, PairAnswer) and outcome.second.winner == "X"
    assert outcome.judge_id == "pairwise-vision-llm+fake-vision@1"
    model = server.model
    assert len(model.prompts) == 2
    assert TASK.prompt.strip() in model.prompts[0] and CRITERION.question in model.prompts[0]
    assert "Drawing X" in model.prompts[0] and "Drawing Y" in model.prompts[0]


def test_a_model_that_always_answers_x_is_a_position_biased_tie() -> None:
    with serving(Pairwise("always_x")) as server:
        outcome = both_orders(_judge(server.url), TASK, CRITERION, A, B)
    assert outcome.result == "tie" and outcome.position_biased
    assert outcome.failure is None


def test_a_garbage_reply_is_a_judge_failure_not_a_verdict() -> None:
    with serving(Pairwise("garbage")) as server:
        outcome = both_orders(_judge(server.url), TASK, CRITERION, A, B)
    assert outcome.result is None and not outcome.position_biased
    failure = outcome.failure
    assert failure is not None and failure.cause == "unparseable"
    assert "Honestly" in (failure.raw_reply or "")


def test_an_unreachable_endpoint_and_a_missing_model_are_failures() -> None:
    judge = VisionPairwiseJudge(_settings("http://127.0.0.1:9"), max_retries=0)
    outcome = both_orders(judge, TASK, CRITERION, A, B)
    assert outcome.failure is not None and outcome.failure.cause == "api_unreachable"
    unset = pairwise_registry().create("vision-llm", Settings())
    assert both_orders(unset, TASK, CRITERION, A, B).failure == PairFailure(
        "not_configured", "no model: set REGUA_JUDGE_MODEL"
    )


def test_combine_rules() -> None:
    x, y, tie = (PairAnswer(w, "r", "{}") for w in ("X", "Y", "tie"))

    assert combine(x, y) == ("a", False)
    assert combine(y, x) == ("b", False)
    assert combine(tie, tie) == ("tie", False)
    assert combine(x, x) == ("tie", True)
    assert combine(x, tie) == ("tie", True)
    assert combine(PairFailure("timeout", "slow"), x) == (None, False)


def test_an_unknown_pairwise_judge_names_the_known_ones() -> None:
    with pytest.raises(JudgeError, match="known: vision-llm"):
        pairwise_registry().create("no-such-judge")


@pytest.mark.parametrize(
    ("text", "cause", "detail"),
    [
        ('{"winner": "Z", "reason": "r"}', "invalid_reply", "winner 'Z' is not X, Y or tie"),
        ('{"winner": "X"}', "invalid_reply", "reply keys ['winner']"),
        ('{"winner": "X", "reason": "r", "score": 3}', "invalid_reply", "reply keys"),
        ('{"winner": "Y", "reason": "  "}', "invalid_reply", "reason must be"),
        ("X is better", "unparseable", "not one JSON object"),
    ],
)
def test_a_reply_outside_the_answer_format_is_refused(text: str, cause: str, detail: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_pair_answer(text)
    assert err.value.cause == cause and detail in str(err.value)


def test_a_fenced_answer_is_accepted() -> None:
    assert parse_pair_answer('```json\n{"winner": "tie", "reason": " same "}\n```') == (
        "tie",
        "same",
    )
