"""Judge panels: which judge profiles look at which criteria, per task family.

A panel is data with an id (``NAME@VERSION``) and a content hash; it is recorded on every
evaluation so a result can always be traced to the judges that were asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from judges.model import canonical_json
from regua.errors import ConfigurationError
from regua.registry import Registry
from regua.settings import Settings
from tasks import TaskSpec

ALL_CRITERIA = "*"
ANY_FAMILY = "*"
"""The family of a panel that fits every task family."""

DisagreementRule = Literal["split", "any_fail_vs_pass"]
DISAGREEMENT_RULES: dict[str, DisagreementRule] = {
    "split": "split",
    "any_fail_vs_pass": "any_fail_vs_pass",
}
"""When the eligible judges of a pass/fail criterion disagree.

``split``: no majority, or a ``pass`` majority over a ``fail`` (the jury's rule, the default);
``any_fail_vs_pass``: also any eligible ``fail`` beside any eligible ``pass``."""
DEFAULT_MAX_LEVEL_SPREAD = 1.5
"""Graded criteria: judges disagree when their levels spread by more than this (2 levels)."""


@dataclass(frozen=True)
class JudgePanel:
    """Judge profiles per criterion for one task family.

    ``assignments`` maps a criterion id (or ``"*"`` for every criterion without its own entry)
    to the profile ids asked about it. Judges that cannot answer a criterion are skipped. With
    ``exclude_own_provider``, a judge whose profile names a ``provider`` (``params.provider``)
    never judges work produced by a model of that provider (:func:`judges.evaluate` leaves it
    out of that run).

    ``adjudicator`` names a judge profile asked when the eligible judges of a criterion disagree
    (``disagreement``: the rule for pass/fail criteria; ``max_level_spread``: the largest spread
    of levels on a graded criterion that is still agreement). Its verdict decides when the gate
    trusts it on that criterion (:mod:`judges.adjudication`); otherwise a person does.
    """

    id: str
    family: str
    assignments: Mapping[str, tuple[str, ...]]
    description: str = ""
    exclude_own_provider: bool = False
    adjudicator: str | None = None
    disagreement: DisagreementRule = "split"
    max_level_spread: float = DEFAULT_MAX_LEVEL_SPREAD
    _frozen: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the id's ``NAME@VERSION`` form and freeze the assignments."""
        name, sep, version = self.id.partition("@")
        if not sep or not name or not version:
            raise ConfigurationError(f"panel id must look like NAME@VERSION: {self.id!r}")
        frozen = {str(k): tuple(v) for k, v in self.assignments.items()}
        object.__setattr__(self, "assignments", frozen)
        object.__setattr__(self, "_frozen", frozen)
        if self.disagreement not in DISAGREEMENT_RULES:
            known = ", ".join(DISAGREEMENT_RULES)
            raise ConfigurationError(f"panel {self.id}: disagreement must be one of {known}")
        if self.max_level_spread < 0:
            raise ConfigurationError(f"panel {self.id}: max_level_spread must be >= 0")

    def profiles_for(self, criterion_id: str) -> tuple[str, ...]:
        """Profile ids asked about this criterion."""
        if criterion_id in self._frozen:
            return self._frozen[criterion_id]
        return self._frozen.get(ALL_CRITERIA, ())

    def profile_ids(self) -> tuple[str, ...]:
        """Every profile id the panel mentions (its adjudicator included), sorted."""
        ids = {p for ids in self._frozen.values() for p in ids}
        if self.adjudicator is not None:
            ids.add(self.adjudicator)
        return tuple(sorted(ids))

    def fits(self, family: str) -> bool:
        """Whether the panel may judge tasks of ``family``."""
        return self.family in (family, ANY_FAMILY)

    def content_hash(self) -> str:
        """sha256 of the family, the assignments and (when set) the provider rule.

        Computed once: the panel is frozen.
        """
        found = self.__dict__.get("_content_hash")
        if found is not None:
            return str(found)
        body: dict[str, Any] = {
            "family": self.family,
            "assignments": {k: list(v) for k, v in self._frozen.items()},
        }
        if self.exclude_own_provider:  # absent when off: panels older than the rule keep their hash
            body["exclude_own_provider"] = True
        body.update(self._adjudication_content())
        found = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        object.__setattr__(self, "_content_hash", found)
        return found

    def _adjudication_content(self) -> dict[str, Any]:
        """Adjudicator and disagreement rules, each only when not at its default (hash-neutral)."""
        out: dict[str, Any] = {}
        if self.adjudicator is not None:
            out["adjudicator"] = self.adjudicator
        if self.disagreement != "split":
            out["disagreement"] = self.disagreement
        if self.max_level_spread != DEFAULT_MAX_LEVEL_SPREAD:
            out["max_level_spread"] = self.max_level_spread
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, as recorded on each evaluation (and listed by ``GET /v1/panels``)."""
        return {
            "id": self.id,
            "family": self.family,
            "assignments": {k: list(v) for k, v in sorted(self._frozen.items())},
            "exclude_own_provider": self.exclude_own_provider,
            "description": self.description,
            "content_hash": self.content_hash(),
            **self._adjudication_content(),
        }


PANELS: Registry[JudgePanel] = Registry("judge panel", content=lambda p: p.content_hash())
"""Panels by id; the same id with other content is refused (a changed panel is a new id)."""
_DEFAULT_FOR_FAMILY: dict[str, str] = {}
_DEFAULT_FOR_TASK: dict[str, str] = {}
_LOOKUP_HOOKS: list[Callable[[], object]] = []
"""Called before a panel is looked up: a watched judges folder registers what was added to it
since (``regua judges add`` while a service runs), see :class:`judges.judge_files.FolderWatch`."""


def add_lookup_hook(hook: Callable[[], object]) -> None:
    """Call ``hook`` before every panel lookup (until :func:`remove_lookup_hook`)."""
    _LOOKUP_HOOKS.append(hook)


def remove_lookup_hook(hook: Callable[[], object]) -> None:
    """Stop calling ``hook`` (no-op when it is not installed)."""
    if hook in _LOOKUP_HOOKS:
        _LOOKUP_HOOKS.remove(hook)


def _before_lookup() -> None:
    for hook in list(_LOOKUP_HOOKS):
        hook()


def register_panel(
    panel: JudgePanel, *, default_for_family: bool = False, default_for_tasks: Iterable[str] = ()
) -> JudgePanel:
    """Register a panel (same id with other content is refused).

    ``default_for_family`` makes it the family's default; ``default_for_tasks`` the default of
    these task versions (``ID@VERSION``), which wins over the family's (:func:`panel_for_task`).
    """
    panel = PANELS.register(panel.id, panel)
    if default_for_family:
        _DEFAULT_FOR_FAMILY[panel.family] = panel.id
    for ref in default_for_tasks:
        _DEFAULT_FOR_TASK[ref] = panel.id
    return panel


def get_panel(panel_id: str) -> JudgePanel:
    """A registered panel by id."""
    _before_lookup()
    return PANELS.get(panel_id)


def list_panels() -> tuple[JudgePanel, ...]:
    """All registered panels, sorted by id."""
    _before_lookup()
    return tuple(PANELS.get(k) for k in PANELS.names())


def vision_configured(settings: Settings | None) -> bool:
    """Whether the settings name a vision model (``REGUA_JUDGE_MODEL``) for the vision judge."""
    return settings is not None and bool(settings.judge_model)


def panel_for_family(family: str, settings: Settings | None = None) -> JudgePanel:
    """The default panel of a task family.

    In order: the panel registered as the family's default (the pelican family's first task
    versions); else the family's own panel (declared for exactly this family, e.g. by
    ``regua judges add``; with several, the last by id); else :data:`FAMILY_DEFAULT` when a vision
    model is configured in ``settings``, :data:`STATIC_ONLY` when not. A task version may have
    its own default: pick panels with :func:`panel_for_task`.
    """
    panel_id = _DEFAULT_FOR_FAMILY.get(family)
    if panel_id is not None:
        return PANELS.get(panel_id)
    own = [p for p in list_panels() if p.family == family]
    if own:
        return own[-1]
    return FAMILY_DEFAULT if vision_configured(settings) else STATIC_ONLY


def panel_for_task(task: TaskSpec, settings: Settings | None = None) -> JudgePanel:
    """The default panel of one task version: its own when registered, else its family's."""
    panel_id = _DEFAULT_FOR_TASK.get(task.ref)
    if panel_id is None:
        return panel_for_family(task.family, settings)
    return PANELS.get(panel_id)


STATIC_ONLY = register_panel(
    JudgePanel(
        id="static-only@1",
        family=ANY_FAMILY,
        assignments={ALL_CRITERIA: ("static@1",)},
        description="The static rules alone, for task families without a panel of their own "
        "when no vision model is configured.",
    )
)

FAMILY_DEFAULT = register_panel(
    JudgePanel(
        id="family-default@1",
        family=ANY_FAMILY,
        assignments={ALL_CRITERIA: ("static@1", "vision-llm-openai@1"), "F1": ("static@1",)},
        description="For a task family without a panel of its own, when a vision model is "
        "configured (REGUA_JUDGE_MODEL): the static rules on the delivery rules (F1), the "
        "settings' vision judge on every other criterion. It votes where it was calibrated for "
        "the family (regua calibrate --task REF), so a new family needs only labels.",
    )
)


PELICAN_DEFAULT = register_panel(
    JudgePanel(
        id="pelican-bicycle-default@1",
        family="pelican-bicycle",
        assignments={ALL_CRITERIA: ("static@1", "geometry@1")},
        description="Deterministic judges only: static rules and mask geometry.",
    ),
    default_for_family=True,
)

PELICAN_WITH_LLM = register_panel(
    JudgePanel(
        id="pelican-bicycle-llm@1",
        family="pelican-bicycle",
        assignments={
            ALL_CRITERIA: ("static@1", "geometry@1", "vision-llm-openai@1"),
            "F1": ("static@1",),
        },
        description="Static and geometry, plus an OpenAI-compatible vision model per criterion.",
    )
)

NEW_PELICAN_TASKS = (
    "pelican-bicycle-open@1",
    "pelican-bicycle-restricted@1",
    "pelican-bicycle-structured@2",
    "pelican-bicycle-animated@2",
)
"""Task versions whose prompts state every scored condition."""

PELICAN_DEFAULT_2 = register_panel(
    JudgePanel(
        id="pelican-bicycle-default@2",
        family="pelican-bicycle",
        assignments={ALL_CRITERIA: ("static@1", "geometry@2")},
        description="Deterministic judges only: static rules and mask geometry for relations; "
        "recognition (P1, B1) waits for a recognising judge or a person.",
    ),
    default_for_tasks=NEW_PELICAN_TASKS,
)

LIGHTHOUSE_VISION = register_panel(
    JudgePanel(
        id="lighthouse-night-vision@1",
        family="lighthouse-night",
        assignments={ALL_CRITERIA: ("static@1", "vision-llm-openai@1"), "F1": ("static@1",)},
        description="The graded example family: the static rules on F1, the vision judge (model "
        "and endpoint from settings) on the critical failure and on every graded level.",
    )
)

PELICAN_VISION = register_panel(
    JudgePanel(
        id="pelican-bicycle-vision@1",
        family="pelican-bicycle",
        assignments={
            ALL_CRITERIA: ("static@1", "geometry@2", "vision-llm-openai@1"),
            "F1": ("static@1",),
        },
        description="The vision judge (model and endpoint from settings) on every visual "
        "criterion, the static rules on F1, mask geometry beside it on relations.",
        exclude_own_provider=True,
    )
)
