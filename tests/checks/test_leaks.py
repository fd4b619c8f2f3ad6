"""Leak matching at extraction (pure): canaries anywhere, prompts of other reserved tasks."""

from __future__ import annotations

from checks.leaks import Leak, Watched, find_leaks

OWL = Watched("owl@1", "regua canary GUID 0f0e-1234-abcd", "Draw an owl paddling a kayak.")
FOX = Watched("fox@2", "FOX-CANARY-77aa-bb12", "Draw a fox reading a map under a lamp.")


def test_canary_found_in_any_case_and_spacing() -> None:
    reply = "<svg><!-- REGUA  canary\nGUID 0F0E-1234-ABCD --></svg>"
    assert find_leaks(reply, [OWL, FOX]) == (Leak("owl@1", "canary"),)


def test_prompt_of_another_reserved_task_is_flagged_but_not_the_own_one() -> None:
    reply = "<svg><title>Draw an owl paddling\n a kayak.</title></svg>"
    assert find_leaks(reply, [OWL, FOX], own_ref="fox@2") == (Leak("owl@1", "prompt"),)
    assert find_leaks(reply, [OWL, FOX], own_ref="owl@1") == ()


def test_clean_reply_and_nothing_watched() -> None:
    assert find_leaks("<svg><circle r='2'/></svg>", [OWL, FOX]) == ()
    assert find_leaks("regua canary GUID 0f0e-1234-abcd", []) == ()


def test_own_canary_still_counts() -> None:
    reply = "FOX-CANARY-77aa-bb12 Draw a fox reading a map under a lamp."
    assert find_leaks(reply, [FOX], own_ref="fox@2") == (Leak("fox@2", "canary"),)
