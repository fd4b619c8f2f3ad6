"""The knobs of a report (:class:`ReportConfig`), shared by the report builder and its parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReportConfig:
    """Knobs of a report; all of them are recorded in its provenance."""

    seed: int = 20261129
    resamples: int = 1000
    level: float = 0.95
    group_by: str = "model"
    family_weights: str | Mapping[str, float] = "equal"
    """``equal`` (each family counts the same), ``runs`` (by runs), or family → weight."""
    bt_prior: float = 0.5
    include_run_ids: bool = True
    """List every evaluation id in the provenance (a digest is always recorded)."""
    title: str = "regua report"
    filters: Mapping[str, Any] = field(default_factory=dict)
    by: str = "family"
    """The ``weighted`` section: ``family`` or ``dimension:NAME`` (``service.reports.slices``)."""
