"""Leak detection at extraction: does a reply carry a reserved task's canary or prompt (pure).

The service passes in what to watch for (:class:`Watched`: every reserved, non-retired task's
canary and prompt); :func:`find_leaks` answers which of them a raw reply contains. Matching is
case-insensitive and blind to runs of whitespace, so re-wrapped or re-cased copies still match.
A reply to a reserved task may quote its *own* prompt (a ``<title>`` often does): only the
canary counts there, the prompt is matched against the other reserved tasks.

Besides the whole prompt, a reply that shares any run of :data:`NGRAM` consecutive words with a
reserved prompt is flagged (kind ``overlap``) with the overlapping text (as the reply wrote it)
and the share of the prompt's 8-grams the reply contains. Words are normalised: lower case,
apostrophes dropped, every other punctuation mark a word break.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LEAK_KINDS = ("canary", "prompt", "overlap")
NGRAM = 8
"""Consecutive words a reply must share with a reserved prompt to be flagged as an overlap."""
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
OVERLAP_JOIN = " … "
"""Between two separate overlapping passages of one reply."""


@dataclass(frozen=True)
class Watched:
    """A reserved task to watch for: its reference, canary and prompt text."""

    ref: str
    canary: str
    prompt: str


@dataclass(frozen=True)
class Leak:
    """One reserved task found in a reply, and what of it was found (``canary`` or ``prompt``)."""

    ref: str
    kind: str
    overlap: str | None = None
    """For ``overlap``: the reply's text that shares 8-grams with the prompt."""
    share: float | None = None
    """For ``overlap``: the share of the prompt's 8-grams found in the reply."""


def words(text: str) -> list[tuple[str, int, int]]:
    """The normalised words of ``text`` with their start and end offsets in it."""
    return [
        (m.group().casefold().replace("'", "").replace("\u2019", ""), m.start(), m.end())
        for m in _WORD.finditer(text)
    ]


def ngram_overlap(reply: str, prompt: str, n: int = NGRAM) -> tuple[str, float] | None:
    """The reply's passages sharing ``n``-grams with ``prompt`` and the share of its ``n``-grams.

    None when they share no ``n``-gram (or the prompt has fewer than ``n`` words).

    >>> ngram_overlap("x: The owl paddles a red kayak across the lake!", "Draw this. "
    ...     "The owl paddles a red kayak across the lake at dawn.")
    ('The owl paddles a red kayak across the lake', 0.3333333333333333)
    """
    p_words = [w for w, _, _ in words(prompt)]
    grams = {tuple(p_words[i : i + n]) for i in range(len(p_words) - n + 1)}
    if not grams:
        return None
    r_words = words(reply)
    tokens = [w for w, _, _ in r_words]
    hits = [i for i in range(len(tokens) - n + 1) if tuple(tokens[i : i + n]) in grams]
    if not hits:
        return None
    spans: list[list[int]] = []
    for i in hits:  # merge overlapping windows into passages
        if spans and i < spans[-1][1]:
            spans[-1][1] = i + n
        else:
            spans.append([i, i + n])
    text = OVERLAP_JOIN.join(reply[r_words[a][1] : r_words[b - 1][2]] for a, b in spans)
    found = {tuple(tokens[i : i + n]) for i in hits}
    return text, len(found) / len(grams)


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def find_leaks(reply: str, watched: Sequence[Watched], own_ref: str = "") -> tuple[Leak, ...]:
    r"""Every watched task whose canary (or, but for ``own_ref``, prompt) ``reply`` contains.

    One :class:`Leak` per task and kind, in the order of ``watched``; a reply that does not hold
    a prompt whole but shares 8-grams with it gives an ``overlap`` leak instead of ``prompt``.

    >>> w = [Watched("secret@1", "regua canary GUID 1234-abcd", "Draw an owl on a kayak.")]
    >>> find_leaks("<svg><!-- REGUA canary GUID 1234-ABCD --></svg>", w)
    (Leak(ref='secret@1', kind='canary', overlap=None, share=None),)
    >>> find_leaks("<title>Draw an owl\n on a kayak.</title>", w, own_ref="secret@1")
    ()
    """
    text = _norm(reply)
    found: list[Leak] = []
    for task in watched:
        canary = _norm(task.canary)
        if canary and canary in text:
            found.append(Leak(task.ref, "canary"))
        prompt = _norm(task.prompt)
        if task.ref == own_ref or not prompt:
            continue
        if prompt in text:
            found.append(Leak(task.ref, "prompt"))
        elif (overlap := ngram_overlap(reply, task.prompt)) is not None:
            found.append(Leak(task.ref, "overlap", overlap[0][:2000], overlap[1]))
    return tuple(found)
