"""What ``regua calibrate`` prints.

The judge's numbers, the labels' provenance and agreement, the disputed items kept out of the
gate, and each criterion's gate status. Labels the project wrote (the bundled set) are called
project-written labels, never human ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from judges.calibration.runner import CalibrationRun

STATUS_WORDS = {"trusted": "TRUSTED", "not_trusted": "NOT TRUSTED", "inconclusive": "INCONCLUSIVE"}
MAX_LISTED = 50
"""At most this many disputed items are listed (the count is always printed)."""


def _down(v: float) -> float:
    return math.floor(v * 100 + 1e-9) / 100


def _up(v: float) -> float:
    return math.ceil(v * 100 - 1e-9) / 100


def est(d: Mapping[str, Any]) -> str:
    """A point value with its interval (rounded outwards, so it shows containing the point)."""
    v = d.get("value")
    if v is None:
        return "n/a"
    lo, hi = d.get("ci_low"), d.get("ci_high")
    ci = "" if lo is None or hi is None else f" [{_down(lo):.2f}, {_up(hi):.2f}]"
    num, den = d.get("numerator"), d.get("denominator")
    frac = "" if num is None or den is None else f" ({num}/{den})"
    return f"{v:.3f}{ci}{frac}"


def _wilson(d: Mapping[str, Any]) -> str:
    lo, hi = d.get("wilson_low"), d.get("wilson_high")
    return "" if lo is None or hi is None else f" Wilson [{_down(lo):.2f}, {_up(hi):.2f}]"


def judge_lines(run: CalibrationRun) -> list[str]:
    """The judge's numbers on the scored items (never accuracy alone)."""
    m = run.metrics.to_dict()
    per_class = ", ".join(f"{k} {est(v)}" for k, v in m["per_class_f1"].items())
    return [
        f"run {run.run_id}: {run.profile_id} on {run.set_id} ({run.split}, seed {run.split_seed})",
        f"judge {run.profile_id} hash {run.profile_hash or 'unknown'} (the id it votes under)",
        f"items {m['n_items']}, scored {m['n_scored']}, disputed {m['n_disputed']}, "
        f"judge errors {m['n_judge_errors']}",
        f"  macro-F1 {est(m['macro_f1'])}  kappa {est(m['kappa'])}  accuracy {est(m['accuracy'])}",
        f"  F1 per class: {per_class or 'n/a'}",
        f"  missed critical {est(m['missed_critical'])}{_wilson(m['missed_critical'])}  "
        f"false rejects {est(m['false_reject'])}",
        f"  uncertain {est(m['uncertain_rate'])}  invariance violations "
        f"{est(m['invariance_violation'])}  sensitivity {est(m['sensitivity'])}",
        f"  repeat agreement {est(m['repeat_agreement'])}",
    ]


def label_lines(run: CalibrationRun) -> list[str]:
    """Where the labels come from, how far their authors agree, and the disputed items."""
    h = run.human.to_dict()
    project = run.label_provenance == "project"
    who = "label passes" if project else "annotators"
    lines = [
        "labels: project-written labels (by regua's authors from the perturbation design; "
        "not independent judgement)"
        if project
        else "labels: given by people (annotators)"
    ]
    if h["n_items"] == 0:
        lines.append(f"  agreement between {who}: n/a (no item has two {who})")
    else:
        lines.append(
            f"  agreement between {who} (n={h['n_items']} items): "
            f"agreement {est(h['agreement'])}  kappa {est(h['kappa'])}"
        )
    for p in h["pairs"]:
        a, b = p["annotators"]
        lines.append(f"    {a} vs {b} (n={p['n']}): kappa {est(p['kappa'])}")
    if run.disputed:
        n = len(run.disputed)
        items = "item" if n == 1 else "items"
        lines.append(f"  {who} disagree on {n} {items} (kept out of the gate):")
        for d in run.disputed[:MAX_LISTED]:
            said = " ".join(f"{k}={v}" for k, v in d["labels"].items())
            lines.append(f"    {d['item_id']}  {said}")
        if len(run.disputed) > MAX_LISTED:
            lines.append(f"    … and {len(run.disputed) - MAX_LISTED} more (see the run JSON)")
    return lines


def gate_lines(run: CalibrationRun) -> list[str]:
    """One line per criterion: trusted / not trusted / inconclusive, with the reasons."""
    out = []
    for d in run.decisions:
        word = STATUS_WORDS.get(d.status or "", "NOT TRUSTED")
        out.append(f"gate {d.criterion}: {word} — {'; '.join(d.reasons)}")
    return out


def summary_lines(run: CalibrationRun) -> list[str]:
    """Every line ``regua calibrate`` prints."""
    return [*judge_lines(run), *label_lines(run), *gate_lines(run)]
