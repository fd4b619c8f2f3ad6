"""Pairwise judging: two drawings, one criterion, both orders; Bradley-Terry over the results.

Pure apart from the vision judge's HTTP. Built-in pairwise judges register in
:func:`pairwise_registry` exactly like plugins (:func:`register_pairwise_judge`).
"""

from __future__ import annotations

from judges.pairwise.agreement import (
    HumanPreference,
    HumanWinner,
    JudgedPair,
    PairwiseCalibration,
    RankingAgreement,
    calibrate_pairwise,
    ranking_agreement,
)
from judges.pairwise.bradley_terry import (
    Comparison,
    RankedModel,
    Ranking,
    elo,
    fit_scores,
    rank,
    technical_ties,
    win_matrix,
)
from judges.pairwise.model import (
    Label,
    PairAnswer,
    PairFailure,
    PairInput,
    PairwiseFactory,
    PairwiseJudge,
    PairwiseRegistry,
    Result,
)
from judges.pairwise.orders import PairOutcome, both_orders, combine
from judges.pairwise.vision import KIND as VISION_KIND
from judges.pairwise.vision import create_vision_pairwise

_REGISTRY = PairwiseRegistry()
_REGISTRY.register(VISION_KIND, create_vision_pairwise)  # the built-in, as a plugin registers


def pairwise_registry() -> PairwiseRegistry:
    """The process-wide pairwise registry, with the built-in ``vision-llm`` judge."""
    return _REGISTRY


def register_pairwise_judge(kind: str, factory: PairwiseFactory, *, replace: bool = False) -> None:
    """Register a pairwise judge kind (plugins and built-ins alike)."""
    pairwise_registry().register(kind, factory, replace=replace)


__all__ = [
    "Comparison",
    "HumanPreference",
    "HumanWinner",
    "JudgedPair",
    "Label",
    "PairAnswer",
    "PairFailure",
    "PairInput",
    "PairOutcome",
    "PairwiseCalibration",
    "PairwiseFactory",
    "PairwiseJudge",
    "PairwiseRegistry",
    "RankedModel",
    "Ranking",
    "RankingAgreement",
    "Result",
    "both_orders",
    "calibrate_pairwise",
    "combine",
    "elo",
    "fit_scores",
    "pairwise_registry",
    "rank",
    "ranking_agreement",
    "register_pairwise_judge",
    "technical_ties",
    "win_matrix",
]
