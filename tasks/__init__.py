"""Task specs as data (frozen prompts, acceptance tables, render and animation plans)."""

from tasks.model import (
    AllowedFeatures,
    AnimationPlan,
    Criterion,
    CriterionKind,
    Mode,
    OutputConstraints,
    Pool,
    RenderProfile,
    TaskSpec,
    parse_ref,
)
from tasks.registry import TaskRegistry, bundled_registry, load_task_file, load_task_text

__all__ = [
    "AllowedFeatures",
    "AnimationPlan",
    "Criterion",
    "CriterionKind",
    "Mode",
    "OutputConstraints",
    "Pool",
    "RenderProfile",
    "TaskRegistry",
    "TaskSpec",
    "bundled_registry",
    "load_task_file",
    "load_task_text",
    "parse_ref",
]
