"""The geometry a task declares, its own or its family's (data under ``tasks/families/``)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from regua.safe_yaml import load_yaml
from tasks.geometry import GeometrySpec
from tasks.model import TaskSpec


@lru_cache(maxsize=16)
def family_geometry(family: str) -> GeometrySpec | None:
    """The geometry a task family declares as data (``tasks/families/<family>.yaml``), or None."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", family):
        return None
    entry = resources.files("tasks") / "families" / f"{family}.yaml"
    if not entry.is_file():
        return None
    data = load_yaml(entry.read_text(encoding="utf-8"))
    return GeometrySpec.model_validate(data["geometry"])


def declared_geometry(task: TaskSpec) -> GeometrySpec | None:
    """The task's own geometry, else its family's when the task requires every required part."""
    if task.geometry is not None:
        return task.geometry
    default = family_geometry(task.family)
    if default is None or not set(default.required_ids()) <= set(task.output.required_ids):
        return None
    return default
