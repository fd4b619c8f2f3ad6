"""The jury's recognition rule: a criterion asking whether there is a recognisable thing is
passed only by a recognising judge; a measuring judge's fail still counts."""

from __future__ import annotations

import pytest

from judges import Evidence, JudgeProfile, Verdict, VerdictStatus, decide_criterion
from judges.jury import NOT_RECOGNISING, needs_recognition, recognises
from tasks import bundled_registry

REG = bundled_registry()
V2 = REG.get("pelican-bicycle-structured@2")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("pelican-bicycle-structured@1", {"P1"}),  # B1 asks for parts "each recognisable"
        ("pelican-bicycle-structured@2", {"P1", "B1"}),
        ("pelican-bicycle-open@1", {"P1", "B1"}),
        ("pelican-bicycle-animated@2", {"P1", "B1"}),
    ],
)
def test_which_criteria_ask_for_recognition(ref: str, expected: set[str]) -> None:
    assert {c.id for c in REG.get(ref).criteria if needs_recognition(c)} == expected


def test_who_recognises() -> None:
    assert not recognises(JudgeProfile("g@1", "geometry"))
    assert not recognises(JudgeProfile("s@1", "static"))
    assert recognises(JudgeProfile("v@1", "vision-llm"))
    assert recognises(JudgeProfile("plugin@1", "scripted"))
    assert not recognises(JudgeProfile("v@2", "vision-llm", params={"recognises": False}))


def _v(pid: str, status: str) -> Verdict:
    return Verdict("B1", VerdictStatus(status), Evidence(None, None, "seen"), pid)


KINDS = {"geo@1": "geometry", "vis@1": "vision-llm"}


def _decide(*verdicts: Verdict) -> tuple[str, str | None, list[tuple[str, bool, str | None]]]:
    out = decide_criterion(
        V2.criterion("B1"),
        verdicts,
        [],
        lambda _pid: True,  # everyone calibrated
        recognising=lambda pid: KINDS[pid] != "geometry",
    )
    return (
        out.status,
        out.review_reason,
        [(v.judge_profile_id, v.eligible, v.note) for v in out.votes],
    )


def test_a_measuring_judges_pass_is_recorded_not_counted() -> None:
    assert _decide(_v("geo@1", "pass")) == (
        "uncertain",
        "no_recognising_judge",
        [("geo@1", False, NOT_RECOGNISING)],
    )


def test_a_measuring_judges_fail_still_counts() -> None:
    status, _reason, votes = _decide(_v("geo@1", "fail"))
    assert status == "fail" and votes == [("geo@1", True, None)]


def test_a_recognising_judge_passes_it() -> None:
    status, _reason, votes = _decide(_v("geo@1", "pass"), _v("vis@1", "pass"))
    assert status == "pass"
    assert votes == [("geo@1", False, NOT_RECOGNISING), ("vis@1", True, None)]
