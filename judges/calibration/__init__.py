"""Calibration of judges: perturbation sets, human labels, metrics and the reliability gate.

Import surface::

    from judges.calibration import perturb, run_calibration, load_bundled_set, GateConfig, ...

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
from judges.calibration.perturb import (
    Recipe,
    Variant,
    default_recipes,
    get_perturbation,
    list_perturbations,
    manifest_jsonl,
    perturb,
    perturb_many,
)
from judges.calibration.perturb_registry import (
    Effect,
    PerturbationNotApplicableError,
    PerturbationSpec,
    register_perturbation,
)
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
    "Effect",
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
    "PerturbationNotApplicableError",
    "PerturbationSpec",
    "Recipe",
    "Reference",
    "ScoredItem",
    "Split",
    "Variant",
    "VerdictFn",
    "VerdictLike",
    "build_bundle",
    "compute_metrics",
    "decide",
    "default_recipes",
    "eligibility_table",
    "get_perturbation",
    "human_agreement",
    "latest_decisions",
    "list_perturbations",
    "load_bundled_set",
    "make_split",
    "manifest_jsonl",
    "perturb",
    "perturb_many",
    "read_label_folder",
    "register_perturbation",
    "run_calibration",
    "set_from_label_table",
]
