"""Small builders of report rows for the tests."""

from __future__ import annotations

from typing import Any

from service.reports import ReportRow


def runs(
    model: str,
    outcomes: list[str],
    task_ref: str = "pelican-bicycle@1",
    family: str = "pelican",
    pool: str = "core",
    repeats: int = 1,
    **extra: Any,
) -> list[ReportRow]:
    """One row per outcome; item ``i // repeats``, repeat ``i % repeats``."""
    out = []
    for i, outcome in enumerate(outcomes):
        out.append(
            ReportRow(
                run_id=f"{task_ref}/{model}/{i}",
                task_ref=task_ref,
                family=family,
                pool=pool,
                model=model,
                outcome=outcome,
                item_key=f"item-{i // repeats}",
                repeat=i % repeats,
                evaluation_id=f"ev-{task_ref}/{model}/{i}",
                judge_panel_id="panel-1",
                **extra,
            )
        )
    return out


def counts(passes: int, fails: int, pending: int, incomplete: int = 0) -> list[str]:
    """An outcome list with these counts."""
    return (
        ["pass"] * passes + ["fail"] * fails + ["pending"] * pending + ["incomplete"] * incomplete
    )
