"""Small task specs for experiment tests: ten tasks decided by the static rules alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tasks import TaskRegistry, TaskSpec, bundled_registry

FAMILY = "exp-mini"


TINY = range(4, 9)
"""Tasks whose byte limit (300) any drawing breaks: they fail by that rule, never rendered."""
TINY_MAX_BYTES = 300


def mini_tasks(n: int = 10, pending_last: bool = True) -> list[TaskSpec]:
    """``exp-mini-0..n-1@1``: the static pelican task with criterion F1 only (the static rules
    decide it), the last one also with P1 (nobody on the static-only panel can, so: pending);
    tasks 4-8 allow 300 bytes, so a drawing fails there by the declared limit (fast: no render)."""
    base = bundled_registry().get("pelican-bicycle-static@1").model_dump(mode="json")
    criteria = base["criteria"]
    specs = []
    for i in range(n):
        doc: dict[str, Any] = {**base, "id": f"exp-mini-{i}", "family": FAMILY}
        doc["prompt"] = f"{base['prompt']}(Drawing {i} of the series.)\n"
        keep = ("F1", "P1") if pending_last and i == n - 1 else ("F1",)
        doc["criteria"] = [c for c in criteria if c["id"] in keep]
        if i in TINY:
            doc["output"] = {**doc["output"], "max_bytes": TINY_MAX_BYTES}
        specs.append(TaskSpec.model_validate(doc))
    return specs


def register_tasks(registry: TaskRegistry, specs: Sequence[TaskSpec]) -> None:
    """Register the mini tasks in a service's registry (before it serves)."""
    for spec in specs:
        registry.register(spec)
