"""Leak detection at extraction: does a reply carry a reserved task's canary or prompt (pure).

The service passes in what to watch for (:class:`Watched`: every reserved, non-retired task's
canary and prompt); :func:`find_leaks` answers which of them a raw reply contains. Matching is
case-insensitive and blind to runs of whitespace, so re-wrapped or re-cased copies still match.
A reply to a reserved task may quote its *own* prompt (a ``<title>`` often does): only the
canary counts there, the prompt is matched against the other reserved tasks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LEAK_KINDS = ("canary", "prompt")
_SPACE = re.compile(r"\s+")


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


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def find_leaks(reply: str, watched: Sequence[Watched], own_ref: str = "") -> tuple[Leak, ...]:
    r"""Every watched task whose canary (or, but for ``own_ref``, prompt) ``reply`` contains.

    One :class:`Leak` per task and kind, in the order of ``watched``.

    >>> w = [Watched("secret@1", "regua canary GUID 1234-abcd", "Draw an owl on a kayak.")]
    >>> find_leaks("<svg><!-- REGUA canary GUID 1234-ABCD --></svg>", w)
    (Leak(ref='secret@1', kind='canary'),)
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
        if task.ref != own_ref and prompt and prompt in text:
            found.append(Leak(task.ref, "prompt"))
    return tuple(found)
