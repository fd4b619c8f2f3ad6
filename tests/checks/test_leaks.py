"""Leak matching at extraction (pure): canaries anywhere, prompts of other reserved tasks."""

from __future__ import annotations

from checks.leaks import Leak, Watched, find_leaks, ngram_overlap

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


def test_eight_shared_words_are_an_overlap_with_their_text_and_share() -> None:
    prompt = "Sketch a kite. A red fox reads a folded map under a lamp at night. Sign it."
    watched = [Watched("kite@1", "KITE-CANARY-1", prompt)]
    reply = "<svg><desc>a RED fox reads a folded-map under a lamp</desc></svg>"
    (leak,) = find_leaks(reply, watched)
    # "folded-map" breaks into two words; 10 shared words hold 3 of the prompt's 10 8-grams
    assert (leak.kind, leak.overlap) == ("overlap", "a RED fox reads a folded-map under a lamp")
    assert leak.share == 3 / 10
    assert find_leaks("a red fox reads a folded map under", watched)[0].share == 1 / 10
    assert find_leaks("a red fox reads a folded map", watched) == ()  # seven words
    assert find_leaks(reply, watched, own_ref="kite@1") == ()  # its own prompt may be quoted
    whole = find_leaks(prompt, watched)
    assert [x.kind for x in whole] == ["prompt"]  # the whole prompt: no second, overlap flag


def test_two_separate_passages_are_both_named() -> None:
    prompt = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    got = ngram_overlap(
        "One two three four five six seven eight ... seven eight nine ten "
        "eleven twelve thirteen fourteen",
        prompt,
    )
    assert got is not None
    assert got[0] == (
        "One two three four five six seven eight … seven eight nine ten eleven twelve thirteen "
        "fourteen"
    )
    assert got[1] == 2 / 7 and ngram_overlap("zero one two", prompt) is None
