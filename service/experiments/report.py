"""An experiment's report: arms paired by item, from plain stored cases (no database here).

For each arm: outcome counts (pass rate over every case, pending, incomplete and running shown),
cost per passed result, latency p50/p95 by nearest rank (timeouts kept in) and consistency
across repeats. For each pair of arms: the paired table, exact McNemar and the seeded bootstrap
interval of the difference. Then the reproducibility record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from itertools import combinations
from typing import Any

from service.experiments.paired import (
    DIFF_METHOD,
    LATENCY_METHOD,
    PAIR_METHOD,
    Key,
    bootstrap_difference,
    consistency,
    cost_per_pass,
    count_outcomes,
    item_differences,
    latency_summary,
    pair_table,
)
from service.experiments.plan import Plan
from service.experiments.store import CaseView
from service.reports.costs import JUDGING_COST_METHOD, TOTAL_COST_METHOD, total_cost
from service.reports.stats import rng_for

SCHEMA = "regua.experiment-report/1"
ARM_COST_METHOD = (
    "cost per pass = the arm's total cost / its passed results, for generation_cost, "
    "judging_cost and total_cost alike (not available when any case's cost is)"
)
RESAMPLES = 2000
LEVEL = 0.95
Report = dict[str, Any]


def _case_costs(
    cases: Sequence[CaseView], judging_costs: Mapping[int, float | None] | None
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """Generation, judging and total cost of each case.

    Judging: its run's current evaluation; a run not judged yet cost nothing to judge; without
    ``judging_costs`` every judging cost is not available.
    """
    gen = [c.cost_usd for c in cases]
    if judging_costs is None:
        judged: list[float | None] = [None] * len(cases)
    else:
        judged = [
            0.0 if c.evaluation_id is None else judging_costs.get(c.evaluation_id, 0.0)
            for c in cases
        ]
    return gen, judged, [total_cost(g, j) for g, j in zip(gen, judged, strict=True)]


def _arm_section(
    name: str,
    cases: Sequence[CaseView],
    planned: int,
    judging_costs: Mapping[int, float | None] | None,
) -> Report:
    counts = count_outcomes([c.outcome for c in cases])
    gen, judged, total = _case_costs(cases, judging_costs)
    by_item: dict[str, list[str]] = defaultdict(list)
    for c in sorted(cases, key=lambda c: (c.item, c.repeat)):
        by_item[c.item].append(c.outcome)
    return {
        "arm": name,
        "planned": planned,
        "cases": counts.total,
        "counts": counts.by_outcome(),
        "pass_rate": counts.pass_rate,
        "pass_range": counts.range_text(),
        "generation_cost": asdict(cost_per_pass(gen, counts.passed)),
        "judging_cost": asdict(cost_per_pass(judged, counts.passed)),
        "total_cost": asdict(cost_per_pass(total, counts.passed)),
        "latency": asdict(
            latency_summary([c.latency_ms for c in cases], [c.timed_out for c in cases])
        ),
        "consistency": consistency(by_item),
    }


def _outcomes(cases: Sequence[CaseView]) -> dict[Key, str]:
    return {(c.item, c.repeat): c.outcome for c in cases}


def _comparison(
    seed: int, a: str, b: str, ca: Sequence[CaseView], cb: Sequence[CaseView]
) -> Report:
    oa, ob = _outcomes(ca), _outcomes(cb)
    table = pair_table(oa, ob)
    diff, n = item_differences(oa, ob)
    d = bootstrap_difference(diff, n, rng_for(seed, "experiment", a, b), RESAMPLES, LEVEL)
    items = sorted({k[0] for k in set(oa) | set(ob)})
    return {
        "a": a,
        "b": b,
        "table": asdict(table),
        "mcnemar_p": table.mcnemar_p,
        "difference": asdict(d),
        "items": [
            {
                "item": item,
                "a": [oa[k] for k in sorted(oa) if k[0] == item],
                "b": [ob[k] for k in sorted(ob) if k[0] == item],
            }
            for item in items
        ],
    }


def build_experiment_report(
    meta: Mapping[str, Any],
    plan: Plan,
    cases: Sequence[CaseView],
    judging: Mapping[str, Any],
) -> Report:
    """The report of one experiment run.

    Args:
        meta: ``id``, ``name``, ``window``, ``status``, ``spec_hash``, ``created_at``,
            ``finished_at``, ``regua_version`` of the stored experiment.
        plan: its stored plan.
        cases: its stored cases with their runs' outcomes.
        judging: ``panels`` (id and content hash of each panel that judged), ``judges``
            (profile id → content hash), ``voting`` (every voting identity with its gate
            decision), ``costs`` (evaluation id → judging cost in USD, None: not available;
            without it every judging cost is not available) and ``machinery`` (renderer and
            browser versions).
    """
    by_arm: dict[str, list[CaseView]] = defaultdict(list)
    for c in cases:
        by_arm[c.arm].append(c)
    planned = len(plan.items) * plan.repeats
    costs = judging.get("costs")
    arms = [_arm_section(a.name, by_arm[a.name], planned, costs) for a in plan.arms]
    pairs = [
        _comparison(plan.seed, a.name, b.name, by_arm[a.name], by_arm[b.name])
        for a, b in combinations(plan.arms, 2)
    ]
    return {
        "schema": SCHEMA,
        "experiment": {**meta, "items": plan.items, "repeats": plan.repeats},
        "arms": arms,
        "comparisons": pairs,
        "reproducibility": _reproducibility(meta, plan, cases, judging),
        "methods": {
            "pairing": PAIR_METHOD,
            "difference": f"{DIFF_METHOD}; {RESAMPLES} resamples, level {LEVEL}",
            "latency": LATENCY_METHOD,
            "cost": ARM_COST_METHOD,
            "judging_cost": JUDGING_COST_METHOD,
            "total_cost": TOTAL_COST_METHOD,
            "pass_rate": "passes / every case; pending, incomplete and running count as not "
            "passed; the range from pending results is not a confidence interval",
        },
    }


def _reproducibility(
    meta: Mapping[str, Any], plan: Plan, cases: Sequence[CaseView], judging: Mapping[str, Any]
) -> Report:
    hashes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for c in cases:
        if c.prompt_sha256 and c.prompt_sha256 not in hashes[c.arm][c.task_ref]:
            hashes[c.arm][c.task_ref].append(c.prompt_sha256)
    times = sorted(c.created_at for c in cases)
    return {
        "models": {a.name: a.model.model_dump(mode="json") for a in plan.arms},
        "prompt_variants": {a.name: a.prompt_variant for a in plan.arms},
        "task_versions": {a.name: dict(a.refs) for a in plan.arms},
        "prompt_sha256": {
            arm: {ref: sorted(v) for ref, v in refs.items()} for arm, refs in hashes.items()
        },
        "seed": plan.seed,
        "repeats": plan.repeats,
        "panel_requested": plan.panel,
        "panels": judging.get("panels", []),
        "judges": judging.get("judges", {}),
        "voting_judges": judging.get("voting", []),
        "voting_judges_by_arm": judging.get("voting_by_arm", {}),
        "machinery": judging.get("machinery", {}),
        "time_window": {
            "first_generation": times[0].isoformat() if times else None,
            "last_generation": times[-1].isoformat() if times else None,
            "window": meta.get("window"),
        },
        "regua_version": meta.get("regua_version"),
        "spec_hash": meta.get("spec_hash"),
    }
