"""Calibration of judges: calibration sets, human labels, metrics and the reliability gate.

It measures judges against labelled drawings; the drawings of perturbation sets are made by
:mod:`judges.perturbation` (the bundled set is regenerated from its recipe at load).

Import surface::

    from judges.calibration import run_calibration, load_bundled_set, GateConfig, ...

Pure functions and plain dataclasses (``to_dict``/``from_dict``); the only file I/O is in
``setio`` (set import/export) and ``bundled`` (the packaged set).
"""

from judges.calibration.agreement import HumanAgreement, human_agreement
from judges.calibration.bundled import Bundle, build_bundle, load_bundled_set
from judges.calibration.gate import (
    DEFAULT_GATE,
    GateConfig,
    GateDecision,
    GateThresholds,
    decide,
    eligibility_table,
    latest_decisions,
)
from judges.calibration.labeltable import LabelFolder, read_label_folder, set_from_label_table
from judges.calibration.metrics import Estimate, Metrics, ScoredItem, compute_metrics
from judges.calibration.results import CalibrationRun, ItemResult
from judges.calibration.runner import VerdictFn, VerdictLike, run_calibration
from judges.calibration.sets import (
    STATUSES,
    CalibrationItem,
    CalibrationSet,
    Label,
    Reference,
    Split,
    make_split,
)
from judges.calibration.trust import GateStatus, Need

__all__ = [
    "DEFAULT_GATE",
    "STATUSES",
    "Bundle",
    "CalibrationItem",
    "CalibrationRun",
    "CalibrationSet",
    "Estimate",
    "GateConfig",
    "GateDecision",
    "GateStatus",
    "GateThresholds",
    "HumanAgreement",
    "ItemResult",
    "Label",
    "LabelFolder",
    "Metrics",
    "Need",
    "Reference",
    "ScoredItem",
    "Split",
    "VerdictFn",
    "VerdictLike",
    "build_bundle",
    "compute_metrics",
    "decide",
    "eligibility_table",
    "human_agreement",
    "latest_decisions",
    "load_bundled_set",
    "make_split",
    "read_label_folder",
    "run_calibration",
    "set_from_label_table",
]
