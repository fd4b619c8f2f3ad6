"""Calibration of a pairwise judge against human preferences, by hand."""

from __future__ import annotations

from judges.pairwise import HumanPreference, JudgedPair, calibrate_pairwise


def test_agreement_bias_and_counts() -> None:
    judged = [
        JudgedPair("s1", "s2", "a", False),  # s1 better
        JudgedPair("s3", "s4", "tie", True),  # flipped with the order
        JudgedPair("s5", "s6", None, False),  # judge failure
        JudgedPair("s7", "s8", "b", False),
    ]
    humans = [
        HumanPreference("s1", "s2", "left", "ann"),  # agree
        HumanPreference("s1", "s2", "right", "bob"),  # disagree
        HumanPreference("s4", "s3", "tie", "ann"),  # stored the other way round: tie = tie
        HumanPreference("s5", "s6", "left", "ann"),  # failure: not a verdict
        HumanPreference("s8", "s7", "left", "ann"),  # flipped: judge said s8 → agree
        HumanPreference("s9", "s1", "left", "ann"),  # never judged
    ]
    cal = calibrate_pairwise(judged, humans)
    assert (cal.preferences, cal.judged, cal.failures, cal.missing) == (6, 4, 1, 1)
    assert cal.agreements == 3
    assert cal.agreement_rate == 3 / 4
    assert (cal.pairs, cal.position_biased, cal.position_bias_rate) == (3, 1, 1 / 3)
    assert cal.to_dict()["agreement_rate"] == 0.75


def test_no_preferences_gives_no_rates() -> None:
    cal = calibrate_pairwise([], [])
    assert cal.agreement_rate is None and cal.position_bias_rate is None
