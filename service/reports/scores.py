"""Reports of graded tasks: pass rates beside score distributions, intervals on every score.

For each task version with a rubric and each group (model), from the stored rubric scores of the
runs' current evaluations: the verdicts (pass / fail / pending, the pending range kept), the
score distribution (every score seen and how often, median and quartiles by nearest rank), the
mean with a seeded bootstrap 95 % interval, how often each bound held (Wilson interval), and
the distribution of each level. The scale is ordinal and the score moves in steps (the smallest
change one level can make: multiplier x smallest weight, 2 points for
``20 x (0.30 P + … + 0.10 L + …)``): two groups are called apart only when the interval of their
difference of means excludes 0 *and* the difference is at least one step, so a difference of 0.1
is never read as meaningful. Runs whose score is not known yet (a level pending) are counted,
never scored.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from judges.calibration.estimates import wilson_interval
from service.reports.rows import ReportRow
from service.reports.stats import nearest_rank, pass_range, percentile_interval, rng_for
from service.storage import RubricScoreRow
from tasks.grading import parse_formula

N_BOOT = 2000


@dataclass(frozen=True)
class Scored:
    """One run's rubric score as reported (None: not known yet)."""

    task_ref: str
    group: str
    verdict: str
    score: float | None
    levels: Mapping[str, int | None]
    bounds: Mapping[str, bool | None]
    formula: str
    threshold: float


def score_step(formula: str) -> float:
    """The smallest change of the score one level can make (multiplier x smallest weight)."""
    multiplier, terms = parse_formula(formula.partition("=")[2] or formula)
    return float(Decimal(multiplier) * min(Decimal(t.weight) for t in terms))


def read_scores(session: Session, rows: Sequence[ReportRow]) -> list[Scored]:
    """The stored rubric scores of the rows' current evaluations (rows without one left out)."""
    by_eval = {int(r.evaluation_id): r for r in rows if r.evaluation_id}
    if not by_eval:
        return []
    found = session.scalars(
        select(RubricScoreRow).where(RubricScoreRow.evaluation_id.in_(sorted(by_eval)))
    ).all()
    out = []
    for s in found:
        row = by_eval[s.evaluation_id]
        out.append(
            Scored(
                task_ref=row.task_ref,
                group=row.model,
                verdict=row.outcome,
                score=s.score,
                levels={str(k): v for k, v in (s.levels or {}).items()},
                bounds={
                    str(b["text"]): b.get("held") for b in s.bounds or [] if isinstance(b, dict)
                },
                formula=s.formula,
                threshold=s.threshold,
            )
        )
    return out


def _mean_interval(values: Sequence[float], seed_parts: Sequence[str]) -> list[float] | None:
    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=float)
    rng = rng_for(0, "score-mean", *seed_parts)
    draws = data[rng.integers(0, len(data), size=(N_BOOT, len(data)))].mean(axis=1)
    found = percentile_interval(draws)
    return None if found is None else [round(found[0], 4), round(found[1], 4)]


def _group_entry(task_ref: str, group: str, runs: Sequence[Scored]) -> dict[str, Any]:
    verdicts = Counter(r.verdict for r in runs)
    scores = sorted(r.score for r in runs if r.score is not None)
    arr = np.asarray(scores, dtype=float)
    passes, fails, pending = verdicts["pass"], verdicts["fail"], verdicts["pending"]
    span = pass_range(passes, fails, pending)
    levels: dict[str, Counter[int]] = defaultdict(Counter)
    for r in runs:
        for cid, level in r.levels.items():
            if level is not None:
                levels[cid][level] += 1
    bound_texts = sorted({b for r in runs for b in r.bounds})
    return {
        "group": group,
        "runs": len(runs),
        "verdicts": {
            "pass": passes,
            "fail": fails,
            "pending": pending,
            "incomplete": verdicts["incomplete"],
        },
        "pass_range": {"lower": span.lower, "upper": span.upper, "text": span.text()},
        "scored": len(scores),
        "score_unknown": len(runs) - len(scores),
        "distribution": [{"score": s, "runs": n} for s, n in sorted(Counter(scores).items())],
        "median": nearest_rank(arr, 50) if scores else None,
        "quartiles": [nearest_rank(arr, 25), nearest_rank(arr, 75)] if scores else None,
        "mean": round(float(arr.mean()), 4) if scores else None,
        "mean_interval": _mean_interval(scores, (task_ref, group)),
        "bounds_held": {b: _held(runs, b) for b in bound_texts},
        "levels": {c: dict(sorted(n.items())) for c, n in sorted(levels.items())},
        "_scores": scores,
    }


def _held(runs: Sequence[Scored], bound: str) -> dict[str, Any]:
    known = [r.bounds[bound] for r in runs if r.bounds.get(bound) is not None]
    held = sum(1 for k in known if k)
    interval = list(wilson_interval(held, len(known))) if known else None
    return {"held": held, "of": len(known), "wilson": interval}


def _comparison(task_ref: str, a: dict[str, Any], b: dict[str, Any], step: float) -> dict[str, Any]:
    """Difference of mean scores of two groups, with its interval and whether it is readable."""
    xa, xb = np.asarray(a["_scores"], float), np.asarray(b["_scores"], float)
    if len(xa) < 2 or len(xb) < 2:
        return {
            "a": a["group"],
            "b": b["group"],
            "difference": None,
            "interval": None,
            "distinguishable": False,
            "why": "fewer than two scores in a group",
        }
    rng = rng_for(0, "score-diff", task_ref, a["group"], b["group"])
    draws = xa[rng.integers(0, len(xa), size=(N_BOOT, len(xa)))].mean(axis=1) - xb[
        rng.integers(0, len(xb), size=(N_BOOT, len(xb)))
    ].mean(axis=1)
    diff = float(xa.mean() - xb.mean())
    interval = percentile_interval(draws)
    assert interval is not None
    excludes_zero = interval[0] > 0 or interval[1] < 0
    big_enough = abs(diff) >= step
    why = (
        "the interval excludes 0 and the difference is at least one score step"
        if excludes_zero and big_enough
        else "the interval includes 0"
        if not excludes_zero
        else f"smaller than one score step ({step:g}): levels are ordinal"
    )
    return {
        "a": a["group"],
        "b": b["group"],
        "difference": round(diff, 4),
        "interval": [round(interval[0], 4), round(interval[1], 4)],
        "distinguishable": excludes_zero and big_enough,
        "why": why,
    }


def score_section(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    """One entry per graded task version: its rubric, step, groups and their comparisons."""
    by_task: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        by_task[s.task_ref].append(s)
    out = []
    for task_ref in sorted(by_task):
        runs = by_task[task_ref]
        step = score_step(runs[0].formula)
        by_group: dict[str, list[Scored]] = defaultdict(list)
        for r in runs:
            by_group[r.group].append(r)
        groups = [_group_entry(task_ref, g, by_group[g]) for g in sorted(by_group)]
        comparisons = [_comparison(task_ref, a, b, step) for a, b in combinations(groups, 2)]
        for g in groups:
            del g["_scores"]
        out.append(
            {
                "task_ref": task_ref,
                "formula": runs[0].formula,
                "threshold": runs[0].threshold,
                "score_step": step,
                "note": "levels are ordinal: scores move in steps of "
                f"{step:g}; a difference is read only when its interval excludes 0 and it is "
                "at least one step",
                "groups": groups,
                "comparisons": comparisons,
            }
        )
    return out
