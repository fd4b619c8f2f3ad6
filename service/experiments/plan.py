"""Resolving an experiment file against the task registry into a stored, frozen plan.

The plan names, for every arm, the exact task version of every item and the prompt variant, so
a resumed or repeated experiment asks for the same things even after a new task version is
registered (which would otherwise change "the newest version").
"""

from __future__ import annotations

import hashlib
from collections.abc import Container
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from regua.errors import ExperimentFileError, ReguaError
from service.evaluation.evaluator import check_panel
from service.experiments.spec import PROMPT_MAX_CHARS, Arm, ExperimentFile, ModelParams
from tasks import TaskRegistry, TaskSpec
from tasks.model import parse_ref


class PlanArm(BaseModel):
    """An arm with its items resolved to task versions."""

    model_config = ConfigDict(frozen=True)

    name: str
    model: ModelParams
    prompt_variant: str | None
    prompt_template: str | None
    refs: dict[str, str]
    """item → ``ID@VERSION``."""
    revise: int = 0
    """Render-and-revise rounds after each first answer."""
    revise_findings: bool = False


class PlanJudging(BaseModel):
    """The panel a task version's runs ask for, resolved once when the experiment started."""

    model_config = ConfigDict(frozen=True)

    panel: str
    panel_hash: str
    judges: dict[str, str]
    """Profile id the panel names → the identity it votes under (``ID#HASH12``)."""


class Plan(BaseModel):
    """What an experiment asks for, case by case."""

    model_config = ConfigDict(frozen=True)

    items: list[str]
    repeats: int
    seed: int
    panel: str | None
    arms: list[PlanArm]
    judging: dict[str, PlanJudging] = {}
    """Per task version: its panel and judges in the service that started the experiment."""


@dataclass(frozen=True)
class Case:
    """One (arm, item, repeat) of a plan."""

    arm: PlanArm
    item: str
    repeat: int


def _items(spec: ExperimentFile, registry: TaskRegistry, hidden: Container[str]) -> list[str]:
    """The file's items, or every task of its family the caller may see.

    A hidden task's family is never named: it is skipped as if it were another family.
    """
    if spec.items is not None:
        return list(spec.items)
    visible = [t for t in registry.all() if t.ref not in hidden]
    ids = sorted({t.id for t in visible if t.family == spec.family})
    if not ids:
        families = ", ".join(sorted({t.family for t in visible}))
        raise ExperimentFileError(f"family: no task of family {spec.family!r} ({families})")
    return ids


def _ref(item: str, arm: Arm, registry: TaskRegistry) -> str:
    if "@" in item:
        task_id, version = parse_ref(item)
        if arm.task_version is not None:
            version = arm.task_version
        return registry.get(f"{task_id}@{version}").ref
    if arm.task_version is not None:
        return registry.get(f"{item}@{arm.task_version}").ref
    return registry.latest(item).ref


def check_prompt_size(arm: PlanArm, task: TaskSpec, where: str) -> None:
    """Refuse an arm whose prompt template, expanded for ``task``, exceeds :data:`PROMPT_MAX_CHARS`.

    Counted without building the prompt (a template repeating ``{prompt}`` 50,000 times would
    ask for megabytes per case).
    """
    template = arm.prompt_template
    if template is None:
        return
    size = len(template) + template.count("{prompt}") * (len(task.prompt) - len("{prompt}"))
    if size > PROMPT_MAX_CHARS:
        raise ExperimentFileError(
            f"{where}: prompt {arm.prompt_variant!r} expands to {size} characters for "
            f"{task.ref} (at most {PROMPT_MAX_CHARS} per case)"
        )


CASE_KEY_MAX = 200
"""The longest case key the ``generations`` table keeps."""


def check_case_keys(experiment_id: str, plan: Plan) -> None:
    """Refuse ids, arm names or items so long that a case key would not fit."""
    longest = max(
        (
            case_key(experiment_id, a.name, item, plan.repeats - 1)
            for a in plan.arms
            for item in plan.items
        ),
        key=len,
    )
    if len(longest) > CASE_KEY_MAX:
        raise ExperimentFileError(
            f"case key {longest[:60]}... is {len(longest)} characters (at most {CASE_KEY_MAX}); "
            "use a shorter id, window, arm name or item"
        )


def resolve_plan(
    spec: ExperimentFile, registry: TaskRegistry, *, hidden: Container[str] = ()
) -> Plan:
    """Resolve items, versions, prompts and the panel; an unknown one is named with its field.

    ``hidden``: refs of tasks the caller may not see (a ``family`` leaves them out).
    """
    items = _items(spec, registry, hidden)
    arms = []
    for index, arm in enumerate(spec.arms):
        try:
            refs = {item: _ref(item, arm, registry) for item in items}
            if spec.panel is not None:
                for ref in refs.values():
                    check_panel(spec.panel, registry.get(ref))
        except (ReguaError, ValueError) as exc:
            raise ExperimentFileError(f"arms.{index} ({arm.name}): {exc}") from exc
        template = spec.prompts.get(arm.prompt) if arm.prompt is not None else None
        planned = PlanArm(
            name=arm.name,
            model=arm.model,
            prompt_variant=arm.prompt,
            prompt_template=template,
            refs=refs,
            revise=arm.revise,
            revise_findings=arm.revise_findings,
        )
        for ref in sorted(set(refs.values())):
            check_prompt_size(planned, registry.get(ref), f"arms.{index} ({arm.name})")
        arms.append(planned)
    return Plan(items=items, repeats=spec.repeats, seed=spec.seed, panel=spec.panel, arms=arms)


def cases(plan: Plan) -> list[Case]:
    """Every case of the plan, arm by arm, item by item, repeat by repeat."""
    return [
        Case(arm, item, r) for arm in plan.arms for item in plan.items for r in range(plan.repeats)
    ]


def case_key(experiment_id: str, arm: str, item: str, repeat: int) -> str:
    """The generator's key of one case: ``EXPERIMENT:ARM:ITEM:REPEAT``."""
    return f"{experiment_id}:{arm}:{item}:{repeat}"


def prompt_for(arm: PlanArm, task: TaskSpec) -> str | None:
    """The prompt an arm sends for a task (None: the task's own prompt)."""
    if arm.prompt_template is None:
        return None
    return arm.prompt_template.replace("{prompt}", task.prompt)


def prompt_sha256(arm: PlanArm, task: TaskSpec) -> str:
    """sha256 of the prompt the arm sends for the task."""
    text = prompt_for(arm, task) or task.prompt
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
