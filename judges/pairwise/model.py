"""Data types and the extension point of pairwise judging. Pure, no I/O.

A pairwise judge is shown the frozen task, one criterion and the frames of two drawings labelled
``X`` and ``Y`` (never a model's name) and says which one meets the criterion better, or that
they are equal. :func:`judges.pairwise.both_orders` asks it twice, with the drawings swapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from judges.inputs import FrameImage
from regua.errors import JudgeError
from regua.registry import Registry, UnknownPluginError
from regua.settings import Settings
from tasks import Criterion, TaskSpec

Label = Literal["X", "Y", "tie"]
"""What a judge answers: the drawing labelled X, the one labelled Y, or a tie."""

Result = Literal["a", "b", "tie"]
"""A comparison's result for the pair (a, b) it was asked about."""

RESULTS: dict[str, Result] = {"a": "a", "b": "b", "tie": "tie"}
"""Each result by name (narrows stored text to :data:`Result`)."""


@dataclass(frozen=True)
class PairAnswer:
    """A judge's valid answer to one order of a pair."""

    winner: Label
    reason: str
    raw_reply: str
    latency_ms: float = 0.0


@dataclass(frozen=True)
class PairFailure:
    """A judge that could not answer (API down, garbage reply): recorded, never a verdict."""

    cause: str
    detail: str
    raw_reply: str | None = None


@dataclass(frozen=True)
class PairInput:
    """What the judge sees of one order: task, criterion, the X frames and the Y frames."""

    task: TaskSpec
    criterion: Criterion
    x: Sequence[FrameImage] = field(repr=False)
    y: Sequence[FrameImage] = field(repr=False)


class PairwiseJudge(Protocol):
    """The extension point: compare two drawings (X and Y) on one criterion."""

    judge_id: str
    """The judge's identity (kind, model and version), recorded with every comparison."""

    def compare(self, inp: PairInput) -> PairAnswer | PairFailure:
        """Which of X and Y meets ``inp.criterion`` better (or ``tie``), or why it cannot say."""
        ...


PairwiseFactory = Callable[[Settings | None], PairwiseJudge]
"""Builds a pairwise judge from the settings (endpoint, model, key)."""


class UnknownPairwiseJudgeError(UnknownPluginError, JudgeError):
    """No pairwise judge kind is registered under a name (the known ones are listed)."""


class PairwiseRegistry:
    """Pairwise judge kinds by name; built-ins register exactly like plugins."""

    def __init__(self) -> None:
        """An empty registry."""
        self._kinds: Registry[PairwiseFactory] = Registry(
            "pairwise judge",
            entry_point_group="regua.pairwise_judges",
            unknown=UnknownPairwiseJudgeError,
        )

    def register(self, kind: str, factory: PairwiseFactory, *, replace: bool = False) -> None:
        """Register ``factory`` under ``kind`` (refused when taken, unless ``replace``)."""
        self._kinds.register(kind, factory, replace=replace)

    def kinds(self) -> tuple[str, ...]:
        """The registered kinds, sorted."""
        return tuple(self._kinds.names())

    def create(self, kind: str, settings: Settings | None = None) -> PairwiseJudge:
        """A judge of ``kind``; an unknown kind names the known ones."""
        return self._kinds.get(kind)(settings)
