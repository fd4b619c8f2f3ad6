"""Schedules: an experiment's runs over time windows, side by side, never spliced.

A series is one arm under one version key — its model, the task versions it asked for and the
judge panels (id and content hash) that judged it. A window whose key differs (a new task or
judge version) starts a new series beside the old one, so a curve never joins results of
different versions. Each series reports its drift: last pass rate minus first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

HISTORY_SCHEMA = "regua.experiment-history/1"
SPLICE_NOTE = (
    "one series per arm, model, task versions and judge panel hashes; runs of different task "
    "or judge versions are side by side, never spliced into one curve"
)


def version_key(arm: Mapping[str, Any]) -> str:
    """The key that separates series: model, task versions and judging panels of an arm."""
    doc = {
        "arm": arm["arm"],
        "model": arm["model"],
        "task_versions": sorted(set(arm["task_versions"].values())),
        "panels": sorted(arm["panels"]),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def build_history(name: str, windows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Series over windows from each window's arms.

    Args:
        name: the experiment's id (file ``id``).
        windows: oldest first, each ``{"window", "experiment_id", "created_at", "arms": [...]}``
            where an arm has ``arm``, ``model``, ``task_versions`` (item → ref), ``panels``
            (``ID#HASH`` strings), ``pass_rate`` and ``cases``.
    """
    series: dict[str, dict[str, Any]] = {}
    for w in windows:
        for arm in w["arms"]:
            key = version_key(arm)
            entry = series.setdefault(
                key,
                {
                    "arm": arm["arm"],
                    "model": arm["model"]["model"],
                    "task_versions": sorted(set(arm["task_versions"].values())),
                    "panels": sorted(arm["panels"]),
                    "points": [],
                },
            )
            entry["points"].append(
                {
                    "window": w["window"],
                    "experiment_id": w["experiment_id"],
                    "created_at": w["created_at"],
                    "pass_rate": arm["pass_rate"],
                    "cases": arm["cases"],
                }
            )
    out = []
    for entry in series.values():
        rates = [p["pass_rate"] for p in entry["points"] if p["pass_rate"] is not None]
        entry["drift"] = rates[-1] - rates[0] if len(rates) >= 2 else None
        out.append(entry)
    return {"schema": HISTORY_SCHEMA, "experiment": name, "note": SPLICE_NOTE, "series": out}
