"""The pairwise ranking as plain data (JSON, CLI table, report chart), one source at a time.

A ranking is computed per (task version, criterion, source): the source is one judge identity
(its comparisons of stored runs; judges are never pooled) or ``people`` (imported human
preferences, :mod:`service.pairwise.people`). Bradley-Terry scores with bootstrap intervals, the
Elo readout and technical ties follow the one convention of :mod:`judges.pairwise.bradley_terry`.
A judge's ranking carries its calibration against the preferences; people's ranking carries its
agreement with each judge's ranking of the same task version and criterion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judges.pairwise import calibrate_pairwise
from judges.pairwise.bradley_terry import CONVENTION
from regua.errors import InputError
from service.pairwise.fitting import SOURCES, RankingQuery, fit, method_text, ranking_doc
from service.pairwise.people import people_ranking
from service.pairwise.store import comparison_rows, decided, judged_pairs, preferences
from service.storage import Database, PairwiseComparisonRow

__all__ = ["RankingQuery", "agreement_lines", "calibration_line", "pairwise_ranking", "table_lines"]


def judge_of(every: Sequence[PairwiseComparisonRow], judge: str | None) -> str | None:
    """The judge identity to rank: the one asked for, else the only one stored (not several)."""
    if judge is not None:
        return judge
    judges = sorted({r.judge_id for r in every})
    if len(judges) > 1:
        raise InputError(
            f"comparisons by {len(judges)} judges ({', '.join(judges)}): rankings are never "
            "pooled across judges; choose one (judge=ID, or regua pairwise report --judge ID)"
        )
    return judges[0] if judges else None


def pairwise_ranking(db: Database, q: RankingQuery) -> dict[str, Any]:
    """The ranking document of the source selected by ``q``."""
    if q.source not in SOURCES:
        raise InputError(f"source must be judges or people, got {q.source!r}")
    if q.source == "people":
        return people_ranking(db, q)
    every = comparison_rows(db, q.task_ref, q.criterion)
    judge = judge_of(every, q.judge)
    mine = [r for r in every if r.judge_id == judge]
    rows = [r for r in mine if r.a_run_id is not None]  # runs' models; the rest calibrate
    calibration = calibrate_pairwise(judged_pairs(mine), preferences(db, q.task_ref, q.criterion))
    return {
        "task_ref": q.task_ref,
        "criterion": q.criterion,
        "source": "judges",
        "judge": judge,
        "comparisons": len(rows),
        "judge_failures": sum(r.result is None for r in rows),
        "position_biased": sum(r.position_biased for r in rows),
        "judges": [judge] if judge else [],
        **ranking_doc(fit(decided(rows), q)),
        "calibration": calibration.to_dict(),
        "agreement": [],
        "preferences": None,
        "method": method_text(q, f"both-orders pairwise verdicts of the judge {judge}"),
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
    lines.append(CONVENTION)
    return lines


def calibration_line(doc: dict[str, Any]) -> str:
    """One line: comparisons, failures, the position-bias rate and the human agreement."""
    cal = doc["calibration"]
    bias, agree = cal["position_bias_rate"], cal["agreement_rate"]
    bias_text = "n/a" if bias is None else f"{bias:.0%} of {cal['pairs']} pairs"
    agree_text = (
        "n/a"
        if agree is None
        else f"{cal['agreements']} of {cal['judged']} judge verdicts on those pairs ({agree:.0%})"
    )
    return (
        f"{doc['comparisons']} comparisons, {doc['judge_failures']} judge failure(s); "
        f"position-bias rate {bias_text}; agreement with {cal['preferences']} human "
        f"preference(s): {agree_text} (each preference is checked against every verdict this "
        f"judge gave on its pair; {cal['failures']} failed, {cal['missing']} pair(s) not judged)"
    )


def agreement_lines(doc: dict[str, Any]) -> list[str]:
    """One line per judge: how people's ranking agrees with that judge's ranking."""
    lines = []
    for a in doc["agreement"]:
        rho = "n/a" if a["spearman"] is None else f"{a['spearman']:.2f}"
        tau = "n/a" if a["kendall"] is None else f"{a['kendall']:.2f}"
        lines.append(
            f"agreement with {a['judge']} over {a['models']} model(s): Spearman {rho}, "
            f"Kendall {tau}, {a['pairs_same_order']} of {a['pairs']} model pairs in the same order"
        )
    return lines or ["no judge ranking of this task version and criterion to compare with"]
