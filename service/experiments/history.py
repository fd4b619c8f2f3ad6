"""Schedules: an experiment's runs over time windows, side by side, never spliced.

A series is one arm under one version key — its model, the task versions it asked for, the
judge panels (id and content hash) that judged it and the judge identities that voted on its
runs (profile id with model and version, and content hash: ``vision-llm-openai+seeing-1@1#…``).
A window whose key differs (a new task version, panel or judge model) starts a new series beside
the old one, so a curve never joins results of different versions and a judge change never
looks like model drift. Each point carries its pass, fail, pending, incomplete and running
counts; each series reports its drift: last pass rate minus first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

HISTORY_SCHEMA = "regua.experiment-history/1"
SPLICE_NOTE = (
    "one series per arm, model, task versions, judge panel hashes and voting judge identities; "
    "runs of different task versions, panels or judge models are side by side, never spliced "
    "into one curve"
)
COUNTS = ("pass", "fail", "pending", "incomplete", "running")


def version_key(arm: Mapping[str, Any]) -> str:
    """The key that separates series: model, task versions, panels and voting identities."""
    doc = {
        "arm": arm["arm"],
        "model": arm["model"],
        "task_versions": sorted(set(arm["task_versions"].values())),
        "panels": sorted(arm["panels"]),
        "voting_judges": sorted(arm.get("voting_judges", [])),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def build_history(name: str, windows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Series over windows from each window's arms.

    Args:
        name: the experiment's id (file ``id``).
        windows: oldest first, each ``{"window", "experiment_id", "created_at", "arms": [...]}``
            where an arm has ``arm``, ``model``, ``task_versions`` (item → ref), ``panels``
            (``ID#HASH`` strings), ``voting_judges`` (``ID#HASH`` of every identity that voted),
            ``pass_rate``, ``counts`` (pass, fail, pending, incomplete, running) and ``cases``.
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
                    "voting_judges": sorted(arm.get("voting_judges", [])),
                    "points": [],
                },
            )
            entry["points"].append(
                {
                    "window": w["window"],
                    "experiment_id": w["experiment_id"],
                    "created_at": w["created_at"],
                    "pass_rate": arm["pass_rate"],
                    "counts": {k: int(arm.get("counts", {}).get(k, 0)) for k in COUNTS},
                    "cases": arm["cases"],
                }
            )
    out = []
    for entry in series.values():
        rates = [p["pass_rate"] for p in entry["points"] if p["pass_rate"] is not None]
        entry["drift"] = rates[-1] - rates[0] if len(rates) >= 2 else None
        out.append(entry)
    return {"schema": HISTORY_SCHEMA, "experiment": name, "note": SPLICE_NOTE, "series": out}
