"""Render-and-revise in reports: "first answer" and "after k rounds of feedback" kept apart.

A model that looked at its own rendering and answered again did a different job from one that
answered once, so a revised run never enters the report's main tables, aggregates or rankings
(those hold first answers only). This section shows, per task version and model, one series
per round — round 0 (the first answers of the chains), round 1, round 2, … — each with its own
counts and pass range, and how many rounds each chain needed to pass. Series are never pooled
with each other and never ranked.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from service.reports.rows import ReportRow
from service.reports.stats import decided_rate, pass_range

METHOD = (
    "each round is its own series (round 0: the first answers of the revised chains; round k: "
    "the answers after k rounds of seeing their own rendered frames); series are never pooled "
    "with each other or with first answers, and never ranked; revised runs are left out of "
    "every other table, aggregate and ranking of this report"
)
ROUNDS_METHOD = (
    "rounds to pass: the first round whose run passed, when every earlier round failed; "
    "'undecided' when an earlier round is pending or incomplete; 'not within N' when no round "
    "of the chain passed and all were decided"
)
Rounds = Mapping[str, tuple[int, str]]
"""Run id → (round, first run id) of every revised run."""


def series_label(rnd: int) -> str:
    """``first answer`` or ``after k round(s) of feedback``."""
    if rnd == 0:
        return "first answer"
    return f"after {rnd} round{'s' if rnd > 1 else ''} of feedback"


def split_first_answers(rows: Sequence[ReportRow], rounds: Rounds) -> list[ReportRow]:
    """The rows of first answers only (what every other part of a report is computed from)."""
    return [r for r in rows if r.run_id not in rounds]


def _series(rnd: int, rows: Sequence[ReportRow]) -> dict[str, Any]:
    counts = Counter(r.outcome for r in rows)
    p, f, pend = counts["pass"], counts["fail"], counts["pending"]
    rng = pass_range(p, f, pend)
    return {
        "round": rnd,
        "series": series_label(rnd),
        "counts": {
            "pass": p,
            "fail": f,
            "pending": pend,
            "incomplete": counts["incomplete"],
            "runs": len(rows),
        },
        "lower": rng.lower,
        "upper": rng.upper,
        "pass_range": rng.text(),
        "decided_rate": decided_rate(p, f),
    }


def rounds_to_pass(outcomes: Mapping[int, str], last: int) -> str:
    """How many rounds a chain needed: ``"0"``, ``"1"``, …, ``undecided`` or ``not within N``."""
    for rnd in range(last + 1):
        outcome = outcomes.get(rnd)
        if outcome == "pass":
            return str(rnd)
        if outcome != "fail":
            return "undecided"
    return f"not within {last}"


def _chains(
    rows: Sequence[ReportRow], rounds: Rounds
) -> dict[tuple[str, str], dict[str, dict[int, ReportRow]]]:
    """(task, model) → first run id → round → row, for every chain with a revision."""
    by_id = {r.run_id: r for r in rows}
    chains: dict[str, dict[int, ReportRow]] = defaultdict(dict)
    for rid, (rnd, first) in rounds.items():
        if rid in by_id:
            chains[first][rnd] = by_id[rid]
        if first in by_id:
            chains[first][0] = by_id[first]
    out: dict[tuple[str, str], dict[str, dict[int, ReportRow]]] = defaultdict(dict)
    for first, members in sorted(chains.items()):
        anchor = members[min(members)]
        out[(anchor.task_ref, anchor.model)][first] = members
    return out


def revision_section(rows: Sequence[ReportRow], rounds: Rounds) -> dict[str, Any]:
    """The ``revisions`` section of a report, from every row (first answers and revisions)."""
    groups = []
    for (task_ref, model), chains in sorted(_chains(rows, rounds).items()):
        per_round: dict[int, list[ReportRow]] = defaultdict(list)
        for members in chains.values():
            for rnd, row in members.items():
                per_round[rnd].append(row)
        last = max(per_round)
        listed = [
            {
                "first_run_id": first,
                "runs": {str(k): m[k].run_id for k in sorted(m)},
                "outcomes": {str(k): m[k].outcome for k in sorted(m)},
                "rounds_to_pass": rounds_to_pass({k: r.outcome for k, r in m.items()}, last),
            }
            for first, m in chains.items()
        ]
        needed = Counter(c["rounds_to_pass"] for c in listed)
        groups.append(
            {
                "task_ref": task_ref,
                "model": model,
                "chains": len(chains),
                "rounds": last,
                "series": [_series(rnd, per_round[rnd]) for rnd in sorted(per_round)],
                "rounds_to_pass": dict(sorted(needed.items())),
                "chain_runs": listed,
            }
        )
    return {"groups": groups, "method": METHOD, "rounds_method": ROUNDS_METHOD}


SERIES_HEADER = (
    "task_ref",
    "model",
    "round",
    "series",
    "pass",
    "fail",
    "pending",
    "incomplete",
    "runs",
    "pass_range",
    "decided_rate",
)
CHAIN_HEADER = ("task_ref", "model", "first_run_id", "round", "run_id", "outcome", "rounds_to_pass")


def series_rows(section: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """One CSV row per (task, model, round) series."""
    out = []
    for g in section.get("groups", []):
        for s in g["series"]:
            c = s["counts"]
            out.append(
                (
                    g["task_ref"],
                    g["model"],
                    s["round"],
                    s["series"],
                    c["pass"],
                    c["fail"],
                    c["pending"],
                    c["incomplete"],
                    c["runs"],
                    s["pass_range"],
                    s["decided_rate"],
                )
            )
    return out


def chain_rows(section: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """One CSV row per run of every chain (so each series' number traces to its runs)."""
    out = []
    for g in section.get("groups", []):
        for chain in g["chain_runs"]:
            for rnd, run_id in chain["runs"].items():
                out.append(
                    (
                        g["task_ref"],
                        g["model"],
                        chain["first_run_id"],
                        int(rnd),
                        run_id,
                        chain["outcomes"][rnd],
                        chain["rounds_to_pass"],
                    )
                )
    return out


def summary_lines(section: Mapping[str, Any]) -> list[str]:
    """The section as lines of text (``regua report`` prints them)."""
    lines = []
    for g in section.get("groups", []):
        lines.append(f"  {g['task_ref']}  {g['model']}: {g['chains']} revised chain(s), apart:")
        for s in g["series"]:
            lines.append(
                f"    {s['series']}: pass rate {s['pass_range']} ({s['counts']['runs']} runs)"
            )
        needed = ", ".join(f"{k}: {v}" for k, v in g["rounds_to_pass"].items())
        lines.append(f"    rounds to pass: {needed}")
    return lines
