"""The pairwise ranking as the API shows it (``GET /v1/pairwise/ranking``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RankedModelView(BaseModel):
    """One model's Bradley-Terry score, interval, Elo readout and marks."""

    rank: int
    model: str
    score: float
    interval: list[float]
    elo: float
    elo_interval: list[float]
    comparisons: int
    wins: int
    ties: int
    losses: int
    preliminary: bool = Field(description="fewer comparisons than REGUA_PAIRWISE_MIN_COMPARISONS")
    technical_tie: bool
    tied_with: list[str]


class MatrixCell(BaseModel):
    """Wins, ties and losses of ``model`` against ``opponent``."""

    model: str
    opponent: str
    wins: int
    ties: int
    losses: int


class CalibrationView(BaseModel):
    """The pairwise judge against imported human preferences."""

    preferences: int
    judged: int
    failures: int
    missing: int
    agreements: int
    agreement_rate: float | None
    pairs: int
    position_biased: int
    position_bias_rate: float | None


class AgreementView(BaseModel):
    """People's ranking against one judge's ranking of the same models."""

    judge: str
    models: int
    spearman: float | None
    kendall: float | None
    pairs_same_order: int
    pairs: int


class RankingView(BaseModel):
    """The pairwise ranking of one source: one judge identity, or people's preferences."""

    task_ref: str | None
    criterion: str | None
    source: str = Field(description="judges (one judge identity, never pooled) or people")
    judge: str | None
    comparisons: int
    judge_failures: int
    position_biased: int
    judges: list[str]
    models: list[RankedModelView]
    matrix: list[MatrixCell]
    calibration: CalibrationView | None
    agreement: list[AgreementView]
    preferences: dict[str, int] | None
    method: str
