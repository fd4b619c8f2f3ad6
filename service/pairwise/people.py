"""People's preferences as a ranking source of their own.

An imported preference names two drawings; each maps to a model through the file's
``left_model`` / ``right_model`` columns, else through the stored runs that submitted the same
drawing (when exactly one model did). Preferences whose drawings map to no model, or to the same
model, rank nothing and are counted. The ranking uses the same Bradley-Terry fit, intervals, Elo
and technical-tie rule as a judge's, and states its agreement with each judge's ranking.
"""

from __future__ import annotations

from typing import Any

from judges.pairwise import Comparison, HumanPreference, Result
from service.pairwise.fitting import (
    RankingQuery,
    agreement_with_judges,
    fit,
    judge_scores,
    method_text,
    ranking_doc,
)
from service.pairwise.store import models_of_drawings, preferences
from service.storage import Database

AS_RESULT: dict[str, Result] = {"left": "a", "right": "b", "tie": "tie"}


def people_comparisons(
    db: Database, prefs: list[HumanPreference]
) -> tuple[list[Comparison], dict[str, int]]:
    """Preferences as comparisons of models, and how many could not be mapped."""
    unknown = {
        sha
        for p in prefs
        for sha, model in ((p.left, p.models[0]), (p.right, p.models[1]))
        if model is None
    }
    by_run = models_of_drawings(db, unknown) if unknown else {}
    out: list[Comparison] = []
    unmapped = same = 0
    for p in prefs:
        a = p.models[0] or by_run.get(p.left)
        b = p.models[1] or by_run.get(p.right)
        if a is None or b is None:
            unmapped += 1
        elif a == b:
            same += 1
        else:
            out.append(Comparison(a, b, AS_RESULT[p.winner]))
    return out, {
        "imported": len(prefs),
        "ranked": len(out),
        "unmapped": unmapped,
        "same_model": same,
    }


def people_ranking(db: Database, q: RankingQuery) -> dict[str, Any]:
    """The ranking of the models whose drawings people compared, with the judges' agreement."""
    comparisons, counts = people_comparisons(db, preferences(db, q.task_ref, q.criterion))
    fitted = ranking_doc(fit(comparisons, q))
    people = {m["model"]: m["score"] for m in fitted["models"]}
    return {
        "task_ref": q.task_ref,
        "criterion": q.criterion,
        "source": "people",
        "judge": None,
        "comparisons": len(comparisons),
        "judge_failures": 0,
        "position_biased": 0,
        "judges": [],
        **fitted,
        "calibration": None,
        "agreement": agreement_with_judges(people, judge_scores(db, q)),
        "preferences": counts,
        "method": method_text(q, "imported human preferences between the models' drawings"),
    }
