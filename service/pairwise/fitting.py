"""What every pairwise ranking shares: the query, the fit, its document and its method text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judges.pairwise import Comparison, Ranking, rank, ranking_agreement
from judges.pairwise.bradley_terry import CONVENTION, PRIOR
from service.pairwise.store import comparison_rows, decided
from service.storage import Database

METHOD = (
    "Bradley-Terry maximum-likelihood fit on {what} (a tie counts half a win each; {prior} "
    "virtual tie per pair of models); 95 % percentile bootstrap intervals over comparisons "
    "({resamples} resamples, seed {seed}). {convention} Preliminary: fewer than {min_n} "
    "comparisons."
)
SOURCES = ("judges", "people")


@dataclass(frozen=True)
class RankingQuery:
    """Which comparisons to rank and how: one task version, criterion and source."""

    task_ref: str | None = None
    criterion: str | None = None
    min_comparisons: int = 20
    resamples: int = 500
    seed: int = 0
    judge: str | None = None
    """The judge identity ranked; None = the only judge with comparisons (several: refused)."""
    source: str = "judges"
    """``judges`` (one judge's comparisons of runs) or ``people`` (imported preferences)."""


def ranking_doc(result: Ranking) -> dict[str, Any]:
    """The models and the confrontation matrix of a fitted ranking."""
    models = [
        {
            "rank": m.rank,
            "model": m.model,
            "score": m.score,
            "interval": list(m.interval),
            "elo": m.elo,
            "elo_interval": list(m.elo_interval),
            "comparisons": m.comparisons,
            "wins": m.wins,
            "ties": m.ties,
            "losses": m.losses,
            "preliminary": m.preliminary,
            "technical_tie": bool(m.tied_with),
            "tied_with": list(m.tied_with),
        }
        for m in result.models
    ]
    matrix = [
        {"model": a, "opponent": b, "wins": w, "ties": t, "losses": lo}
        for a, row in sorted(result.matrix.items())
        for b, (w, t, lo) in sorted(row.items())
    ]
    return {"models": models, "matrix": matrix}


def method_text(q: RankingQuery, what: str) -> str:
    """The method sentence of a ranking (the one Bradley-Terry convention, stated)."""
    return METHOD.format(
        what=what,
        prior=PRIOR,
        resamples=q.resamples,
        seed=q.seed,
        convention=CONVENTION,
        min_n=q.min_comparisons,
    )


def fit(comparisons: Sequence[Comparison], q: RankingQuery) -> Ranking:
    """The ranking of ``comparisons`` with the query's bootstrap settings."""
    return rank(comparisons, min_comparisons=q.min_comparisons, resamples=q.resamples, seed=q.seed)


def judge_scores(db: Database, q: RankingQuery) -> dict[str, dict[str, float]]:
    """Per judge identity with comparisons of runs of ``q``'s key: model → fitted score."""
    out: dict[str, dict[str, float]] = {}
    rows = [r for r in comparison_rows(db, q.task_ref, q.criterion) if r.a_run_id is not None]
    for judge in sorted({r.judge_id for r in rows}):
        fitted = rank(decided([r for r in rows if r.judge_id == judge]), resamples=50, seed=q.seed)
        out[judge] = {m.model: m.score for m in fitted.models}
    return out


def agreement_with_judges(
    people: dict[str, float], judges: dict[str, dict[str, float]]
) -> list[dict[str, Any]]:
    """People's ranking against each judge's: Spearman, Kendall and model pairs in order."""
    return [
        {"judge": judge} | ranking_agreement(people, scores).to_dict()
        for judge, scores in judges.items()
    ]
