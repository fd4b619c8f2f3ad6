"""One fake model server for tests, benchmarks and the demo (OpenAI-compatible and Anthropic).

``with serving(Scripted([Reply("…")])) as server:`` runs a real threaded HTTP server on a
loopback port (``server.url``); ``server.requests`` records what it was sent. Answerers:
:class:`Scripted`, :class:`FrameTruth` (a vision model answering from a truth table keyed by
frame hash: statuses, and levels for graded criteria), :class:`ByModel` (several models behind
one endpoint), :class:`Pairwise`, :class:`FailFirst` with :func:`rate_limited`,
:func:`server_error`, :func:`slow` and :func:`garbage`; for the workflows (revise, proposals,
candidate judges) :class:`FixesAfterFrame`, :class:`Proposer` and :class:`YesManWhen`.
"""

from regua.llm.testing.answerers import (
    CRITERION_LINE,
    ByModel,
    FailFirst,
    FrameTruth,
    Pairwise,
    Scripted,
    ScriptedServer,
    asks_level,
    criterion_and_frames,
    garbage,
    is_adjudication,
    rate_limited,
    scripted_server,
    server_error,
    sha256,
    shown_drawings,
    slow,
)
from regua.llm.testing.server import (
    Answerer,
    FakeModelServer,
    Reply,
    Request,
    envelope,
    serving,
)
from regua.llm.testing.workflows import FixesAfterFrame, Proposer, YesManWhen

__all__ = [
    "CRITERION_LINE",
    "Answerer",
    "ByModel",
    "FailFirst",
    "FakeModelServer",
    "FixesAfterFrame",
    "FrameTruth",
    "Pairwise",
    "Proposer",
    "Reply",
    "Request",
    "Scripted",
    "ScriptedServer",
    "YesManWhen",
    "asks_level",
    "criterion_and_frames",
    "envelope",
    "garbage",
    "is_adjudication",
    "rate_limited",
    "scripted_server",
    "server_error",
    "serving",
    "sha256",
    "shown_drawings",
    "slow",
]
