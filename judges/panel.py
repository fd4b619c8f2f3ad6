"""Judge panels: which judge profiles look at which criteria, per task family.

A panel is data with an id (``NAME@VERSION``) and a content hash; it is recorded on every
evaluation so a result can always be traced to the judges that were asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judges.model import canonical_json
from regua.errors import ConfigurationError, NotFoundError

ALL_CRITERIA = "*"


@dataclass(frozen=True)
class JudgePanel:
    """Judge profiles per criterion for one task family.

    ``assignments`` maps a criterion id (or ``"*"`` for every criterion without its own entry)
    to the profile ids asked about it. Judges that cannot answer a criterion are skipped.
    """

    id: str
    family: str
    assignments: Mapping[str, tuple[str, ...]]
    description: str = ""
    _frozen: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name, sep, version = self.id.partition("@")
        if not sep or not name or not version:
            raise ConfigurationError(f"panel id must look like NAME@VERSION: {self.id!r}")
        frozen = {str(k): tuple(v) for k, v in self.assignments.items()}
        object.__setattr__(self, "assignments", frozen)
        object.__setattr__(self, "_frozen", frozen)

    def profiles_for(self, criterion_id: str) -> tuple[str, ...]:
        """Profile ids asked about this criterion."""
        if criterion_id in self._frozen:
            return self._frozen[criterion_id]
        return self._frozen.get(ALL_CRITERIA, ())

    def profile_ids(self) -> tuple[str, ...]:
        """Every profile id the panel mentions, sorted."""
        return tuple(sorted({p for ids in self._frozen.values() for p in ids}))

    def content_hash(self) -> str:
        """sha256 of the family and assignments."""
        body = {"family": self.family, "assignments": {k: list(v) for k, v in self._frozen.items()}}
        return hashlib.sha256(canonical_json(body).encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, as recorded on each evaluation."""
        return {
            "id": self.id,
            "family": self.family,
            "assignments": {k: list(v) for k, v in sorted(self._frozen.items())},
            "content_hash": self.content_hash(),
        }


_PANELS: dict[str, JudgePanel] = {}
_DEFAULT_FOR_FAMILY: dict[str, str] = {}


def register_panel(panel: JudgePanel, *, default_for_family: bool = False) -> JudgePanel:
    """Register a panel (same id with other content is refused)."""
    known = _PANELS.get(panel.id)
    if known is not None and known.content_hash() != panel.content_hash():
        raise ConfigurationError(f"panel {panel.id} already registered with other content")
    _PANELS[panel.id] = panel
    if default_for_family:
        _DEFAULT_FOR_FAMILY[panel.family] = panel.id
    return panel


def get_panel(panel_id: str) -> JudgePanel:
    """A registered panel by id."""
    try:
        return _PANELS[panel_id]
    except KeyError:
        raise NotFoundError(f"unknown judge panel {panel_id!r}") from None


def list_panels() -> tuple[JudgePanel, ...]:
    """All registered panels, sorted by id."""
    return tuple(_PANELS[k] for k in sorted(_PANELS))


def panel_for_family(family: str) -> JudgePanel:
    """The default panel of a task family."""
    try:
        return _PANELS[_DEFAULT_FOR_FAMILY[family]]
    except KeyError:
        raise NotFoundError(f"no default judge panel for task family {family!r}") from None


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
