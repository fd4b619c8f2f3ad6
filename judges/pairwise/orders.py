"""The both-orders protocol: ask (A as X, B as Y), then (B as X, A as Y). Pure apart from the judge.

Consistent answers give the winner (or a tie); answers that change with the order (the judge
preferred whatever was shown in one position, or called it a tie in one order only) give a tie
marked ``position_biased``. A judge
failure in either order is recorded as a failure, never as a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judges.inputs import FrameImage
from judges.pairwise.model import Label, PairAnswer, PairFailure, PairInput, PairwiseJudge, Result
from tasks import Criterion, TaskSpec


@dataclass(frozen=True)
class PairOutcome:
    """Both orders of one comparison of drawings a and b, and what they add up to."""

    judge_id: str
    first: PairAnswer | PairFailure
    """Order 1: a shown as X, b as Y."""
    second: PairAnswer | PairFailure
    """Order 2: b shown as X, a as Y."""
    result: Result | None
    """a, b or tie; ``None`` when the judge failed."""
    position_biased: bool

    @property
    def failure(self) -> PairFailure | None:
        """The first failure of the two orders, if any."""
        for answer in (self.first, self.second):
            if isinstance(answer, PairFailure):
                return answer
        return None


def _as_result(label: Label, a_label: Label) -> Result:
    if label == "tie":
        return "tie"
    return "a" if label == a_label else "b"


def combine(
    first: PairAnswer | PairFailure, second: PairAnswer | PairFailure
) -> tuple[Result | None, bool]:
    """(result, position_biased) of the two orders' answers (see the module docstring)."""
    if isinstance(first, PairFailure) or isinstance(second, PairFailure):
        return None, False
    one = _as_result(first.winner, "X")
    two = _as_result(second.winner, "Y")
    if one == two:
        return one, False
    return "tie", True


def both_orders(
    judge: PairwiseJudge,
    task: TaskSpec,
    criterion: Criterion,
    a: Sequence[FrameImage],
    b: Sequence[FrameImage],
) -> PairOutcome:
    """Compare drawings ``a`` and ``b`` on ``criterion`` in both orders."""
    first = judge.compare(PairInput(task, criterion, a, b))
    second = judge.compare(PairInput(task, criterion, b, a))
    result, biased = combine(first, second)
    return PairOutcome(judge.judge_id, first, second, result, biased)
