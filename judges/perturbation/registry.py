"""The perturbation types and the registry built-in and plugin perturbations are added to.

Built-ins (:mod:`judges.perturbation.change`, :mod:`judges.perturbation.keep`)
register through :func:`register_perturbation` exactly like a plugin would;
:mod:`judges.perturbation.generate` loads them and applies them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from lxml import etree

from regua.errors import CalibrationError
from regua.registry import Registry, UnknownPluginError

Family = Literal["must_change", "must_not_change"]


class PerturbationNotApplicableError(CalibrationError):
    """The drawing offers nothing for this perturbation to edit (e.g. no circle to rewrite)."""


@dataclass(frozen=True)
class Effect:
    """What a perturbation is designed to do to the verdicts.

    ``expected`` gives the designed status for criteria in ``must_change`` (and, for borderline
    edits, a best guess for criteria in ``may_change``). ``measured`` records the numbers the
    edit was computed from (wheel diameter, shift in user units, ...).
    """

    must_change: tuple[str, ...] = ()
    may_change: tuple[str, ...] = ()
    expected: Mapping[str, str] = field(default_factory=dict)
    measured: Mapping[str, Any] = field(default_factory=dict)


PerturbFn = Callable[[etree._ElementTree, Mapping[str, Any], random.Random], Effect]


@dataclass(frozen=True)
class PerturbationSpec:
    """A registered perturbation: id, version, family, default parameters and the edit."""

    id: str
    version: int
    family: Family
    description: str
    defaults: Mapping[str, Any]
    apply: PerturbFn


class UnknownPerturbationError(UnknownPluginError, CalibrationError):
    """No perturbation is registered under an id (the known ids are listed)."""


PERTURBATIONS: Registry[PerturbationSpec] = Registry(
    "perturbation",
    content=lambda spec: spec.version,
    unknown=UnknownPerturbationError,
    entry_point_group="regua.perturbations",
)
"""Perturbations by id; one id registered again must keep its version."""


def register_perturbation(spec: PerturbationSpec) -> PerturbationSpec:
    """Add a perturbation to the registry (built-ins register the same way)."""
    return PERTURBATIONS.register(spec.id, spec)


def registered_perturbations() -> Mapping[str, PerturbationSpec]:
    """A read-only view of the registry by id.

    The built-ins are only in it once :mod:`judges.perturbation.generate` has been imported.
    """
    return MappingProxyType(dict(PERTURBATIONS.items()))
