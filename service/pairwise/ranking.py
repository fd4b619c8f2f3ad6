"""The pairwise ranking of stored comparisons as plain data (JSON, CLI table, report chart).

Bradley-Terry scores with bootstrap intervals, the Elo readout, comparisons per model with the
preliminary and technical-tie marks, the confrontation matrix, and the judge's calibration
against imported human preferences (agreement and position-bias rates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judges.pairwise import calibrate_pairwise, rank
from service.pairwise.store import comparison_rows, decided, judged_pairs, preferences
from service.storage import Database

METHOD = (
    "Bradley-Terry maximum-likelihood fit on both-orders pairwise verdicts (a tie, including "
    "a verdict that flipped with the order, counts half a win each; {prior} virtual tie per pair "
    "of models); 95 % percentile bootstrap intervals over comparisons ({resamples} resamples, "
    "seed {seed}); Elo = 1000 + 400 log10(strength). Technical tie: scores differ by less than "
    "the mean half-width of the two intervals. Preliminary: fewer than {min_n} comparisons."
)


@dataclass(frozen=True)
class RankingQuery:
    """Which comparisons to rank and how."""

    task_ref: str | None = None
    criterion: str | None = None
    min_comparisons: int = 20
    resamples: int = 500
    seed: int = 0


def pairwise_ranking(db: Database, q: RankingQuery) -> dict[str, Any]:
    """The ranking document of the stored comparisons selected by ``q``."""
    every = comparison_rows(db, q.task_ref, q.criterion)
    rows = [r for r in every if r.a_run_id is not None]  # runs' models; the rest calibrate
    result = rank(
        decided(rows), min_comparisons=q.min_comparisons, resamples=q.resamples, seed=q.seed
    )
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
    calibration = calibrate_pairwise(judged_pairs(every), preferences(db, q.task_ref, q.criterion))
    return {
        "task_ref": q.task_ref,
        "criterion": q.criterion,
        "comparisons": len(rows),
        "judge_failures": sum(r.result is None for r in rows),
        "position_biased": sum(r.position_biased for r in rows),
        "judges": sorted({r.judge_id for r in rows}),
        "models": models,
        "matrix": matrix,
        "calibration": calibration.to_dict(),
        "method": METHOD.format(
            prior=0.1, resamples=q.resamples, seed=q.seed, min_n=q.min_comparisons
        ),
    }


def table_lines(doc: dict[str, Any]) -> list[str]:
    """The ranking and the confrontation matrix as plain text lines (for the CLI)."""
    lines = [f"{'#':>2}  {'model':<24} {'BT':>6} {'95% CI':>16} {'Elo':>6} {'n':>5}  marks"]
    for m in doc["models"]:
        marks = []
        if m["preliminary"]:
            marks.append("preliminary")
        if m["technical_tie"]:
            marks.append("technical tie with " + ", ".join(m["tied_with"]))
        lo, hi = m["interval"]
        lines.append(
            f"{m['rank']:>2}  {m['model'][:24]:<24} {m['score']:>6.2f} "
            f"{f'[{lo:.2f}, {hi:.2f}]':>16} {m['elo']:>6.0f} {m['comparisons']:>5}  "
            + "; ".join(marks)
        )
    lines.append("confrontation matrix (wins-ties-losses of the row model):")
    names = [m["model"] for m in doc["models"]]
    cells = {(c["model"], c["opponent"]): c for c in doc["matrix"]}
    lines.append(" " * 24 + "".join(f"{n[:12]:>14}" for n in names))
    for a in names:
        row = ""
        for b in names:
            c = cells.get((a, b))
            text = f"{c['wins']}-{c['ties']}-{c['losses']}" if c else "·"
            row += f"{text:>14}"
        lines.append(f"{a[:24]:<24}{row}")
    return lines


def calibration_line(doc: dict[str, Any]) -> str:
    """One line: comparisons, failures, the position-bias rate and the human agreement."""
    cal = doc["calibration"]
    bias, agree = cal["position_bias_rate"], cal["agreement_rate"]
    bias_text = "n/a" if bias is None else f"{bias:.0%} of {cal['pairs']} pairs"
    agree_text = "n/a" if agree is None else f"{agree:.0%} of {cal['judged']}"
    return (
        f"{doc['comparisons']} comparisons, {doc['judge_failures']} judge failure(s); "
        f"position-bias rate {bias_text}; agreement with {cal['preferences']} human "
        f"preference(s) {agree_text}"
    )
