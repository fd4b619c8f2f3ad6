"""How well a pairwise judge agrees with human preferences (its calibration). Pure.

Each human preference names a left and a right drawing (by sha256), the winner (``left``,
``right`` or ``tie``) and the annotator. The judge's outcome for the same pair (left as a, right
as b; a pair stored the other way round is flipped) agrees when it names the same winner or both
say tie. A position-biased outcome is a tie. Judge failures are counted, never agreements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from judges.pairwise.model import Result
from regua.records import field_dict, fields_of

HumanWinner = Literal["left", "right", "tie"]

HUMAN_WINNERS: dict[str, HumanWinner] = {"left": "left", "right": "right", "tie": "tie"}
"""Each human preference by name (narrows stored text to :data:`HumanWinner`)."""


@dataclass(frozen=True)
class HumanPreference:
    """One human judgement of a pair."""

    left: str
    right: str
    winner: HumanWinner
    annotator: str
    models: tuple[str | None, str | None] = (None, None)
    """The models that made the left and right drawings, when known."""


@dataclass(frozen=True)
class JudgedPair:
    """The judge's both-orders outcome for the pair (a, b); ``result`` None = judge failed."""

    a: str
    b: str
    result: Result | None
    position_biased: bool


@dataclass(frozen=True)
class PairwiseCalibration:
    """Agreement of a pairwise judge with human preferences."""

    preferences: int
    judged: int
    failures: int
    """Outcomes of preferred pairs where the judge failed (no verdict)."""
    missing: int
    """Human preferences whose pair the judge was not asked about."""
    agreements: int
    position_biased: int
    """Outcomes whose verdict changed with the order."""
    pairs: int
    """Outcomes with a verdict (the position-bias rate is over these)."""

    @property
    def agreement_rate(self) -> float | None:
        """Agreements over human preferences the judge gave a verdict on."""
        return self.agreements / self.judged if self.judged else None

    @property
    def position_bias_rate(self) -> float | None:
        """Position-biased outcomes over outcomes with a verdict."""
        return self.position_biased / self.pairs if self.pairs else None

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-able form with both rates."""
        return {
            **field_dict(self, "preferences", "judged", "failures", "missing", "agreements"),
            "agreement_rate": self.agreement_rate,
            **field_dict(self, "pairs", "position_biased"),
            "position_bias_rate": self.position_bias_rate,
        }


def _as_human(result: Result) -> HumanWinner:
    return "left" if result == "a" else "right" if result == "b" else "tie"


def _flip(result: Result | None) -> Result | None:
    return {"a": "b", "b": "a", "tie": "tie", None: None}[result]


def calibrate_pairwise(
    judged: Sequence[JudgedPair], humans: Sequence[HumanPreference]
) -> PairwiseCalibration:
    """Agreement, position bias and counts of the judge's outcomes against ``humans``.

    A human preference is checked against every stored outcome of its pair (either way round);
    the position-bias rate is over every outcome with a verdict.
    """
    by_pair: dict[tuple[str, str], list[Result | None]] = {}
    for j in judged:
        by_pair.setdefault((j.a, j.b), []).append(j.result)
        by_pair.setdefault((j.b, j.a), []).append(_flip(j.result))
    agree = judged_n = failures = missing = 0
    for h in humans:
        results = by_pair.get((h.left, h.right))
        if not results:
            missing += 1
            continue
        for result in results:
            if result is None:
                failures += 1
                continue
            judged_n += 1
            agree += _as_human(result) == h.winner
    decided = [j for j in judged if j.result is not None]
    biased = sum(j.position_biased for j in decided)
    return PairwiseCalibration(
        len(humans), judged_n, failures, missing, agree, biased, len(decided)
    )


@dataclass(frozen=True)
class RankingAgreement:
    """How two rankings of the same models agree (over the models both rank)."""

    models: int
    spearman: float | None
    """Spearman's rho of the two orders (None below two common models)."""
    kendall: float | None
    """Kendall's tau-a over the pairs of common models (None below two)."""
    pairs_same_order: int
    pairs: int

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-able form."""
        return fields_of(self)


def ranking_agreement(first: Mapping[str, float], second: Mapping[str, float]) -> RankingAgreement:
    """Agreement of two rankings given as model → score (higher is better).

    Over the models both rank: Spearman's rho of their places, Kendall's tau-a, and how many
    pairs of models the two put in the same order (a pair tied in either counts as not the same).
    """
    common = sorted(set(first) & set(second))
    n = len(common)
    same = discordant = 0
    for i, a in enumerate(common):
        for b in common[i + 1 :]:
            product = (first[a] - first[b]) * (second[a] - second[b])
            same += product > 0
            discordant += product < 0
    pairs = n * (n - 1) // 2
    if n < 2:
        return RankingAgreement(n, None, None, same, pairs)
    place_1 = _places(common, first)
    place_2 = _places(common, second)
    d2 = sum((place_1[m] - place_2[m]) ** 2 for m in common)
    rho = 1.0 - 6.0 * d2 / (n * (n * n - 1))
    return RankingAgreement(n, rho, (same - discordant) / pairs, same, pairs)


def _places(models: Sequence[str], scores: Mapping[str, float]) -> dict[str, float]:
    """Place of each model (1 = best), ties sharing their mean place."""
    ordered = sorted(models, key=lambda m: -scores[m])
    places: dict[str, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and scores[ordered[j + 1]] == scores[ordered[i]]:
            j += 1
        for k in range(i, j + 1):
            places[ordered[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return places
