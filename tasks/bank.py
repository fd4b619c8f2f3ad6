"""Task banks: versioned sets of task versions, with anchor items kept across versions.

Rotation retires tasks and brings in new ones; a bank file (YAML) names one bank version::

    id: pelican-bank
    version: 2
    items: [pelican-bicycle-static@1, pelican-bicycle-open@1]
    anchors: [pelican-bicycle-static@1]

``anchors`` are items the new version keeps from the previous one, so scores of consecutive
versions can be compared on the anchors alone (:func:`shared_anchors`). :func:`check_banks`
says what breaks that: an anchor that is not an item, or one the previous version lacks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from regua.errors import TaskError
from regua.safe_yaml import load_yaml


class Bank(BaseModel):
    """One version of a bank: its task refs and the anchors it shares with the one before."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    version: int = Field(ge=1)
    items: tuple[str, ...] = Field(min_length=1)
    anchors: tuple[str, ...] = ()


def load_bank_text(text: str, source: str = "<text>") -> Bank:
    """Validate one bank YAML text (:class:`TaskError` naming the source when it is not one)."""
    try:
        return Bank.model_validate(load_yaml(text))
    except (yaml.YAMLError, ValidationError) as exc:
        raise TaskError(f"{source}: not a valid bank file:\n{exc}") from exc


def check_banks(banks: Sequence[Bank]) -> list[str]:
    """Problems with a set of bank versions (empty when every rule holds).

    Per bank id, sorted by version: versions are unique; every anchor is an item; every
    version after the first declares anchors, each an item of the version before.
    """
    problems: list[str] = []
    by_id: dict[str, list[Bank]] = {}
    for b in banks:
        by_id.setdefault(b.id, []).append(b)
    for bank_id, versions in sorted(by_id.items()):
        versions.sort(key=lambda b: b.version)
        seen = [b.version for b in versions]
        if len(seen) != len(set(seen)):
            problems.append(f"{bank_id}: version given twice in {seen}")
        for b in versions:
            stray = sorted(set(b.anchors) - set(b.items))
            if stray:
                problems.append(f"{bank_id} v{b.version}: anchors not among its items: {stray}")
        for old, new in itertools.pairwise(versions):
            if not new.anchors:
                problems.append(
                    f"{bank_id} v{new.version}: declares no anchors with v{old.version}"
                )
            lost = sorted(set(new.anchors) - set(old.items))
            if lost:
                problems.append(
                    f"{bank_id} v{new.version}: anchors missing from v{old.version}: {lost}"
                )
    return problems


def shared_anchors(old: Bank, new: Bank) -> tuple[str, ...]:
    """The task refs two bank versions may be compared on: ``new``'s anchors in both."""
    return tuple(a for a in new.anchors if a in old.items and a in new.items)
