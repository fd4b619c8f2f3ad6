"""regua judges: the judge protocol, built-in judges, the jury and ``evaluate``.

Import surface used by the service and by calibration::

    from judges import evaluate, panel_for_family, Verdict, JudgeProfile, ...
"""

from judges.base import (
    Judge,
    JudgeFactory,
    JudgeRegistry,
    create_judge,
    get_profile,
    list_profiles,
    register_judge_kind,
    register_profile,
    registry,
)
from judges.evaluate import evaluate
from judges.human import HUMAN_PROFILE_ID, human_verdict
from judges.jury import (
    NO_RELIABLE_JUDGE,
    Eligibility,
    EligibilityFn,
    decide_criterion,
    decide_outcome,
    is_eligible,
)
from judges.measure_memo import MEASURE_VERSION, MeasurementMemo
from judges.model import (
    CriterionOutcome,
    CriterionStatus,
    Evidence,
    FrameImage,
    JudgeFailure,
    JudgeInput,
    JudgeProfile,
    MaskImage,
    MaskKind,
    Outcome,
    OutcomeStatus,
    PanelResult,
    Verdict,
    VerdictStatus,
    Vote,
    mask_kind,
)
from judges.panel import (
    JudgePanel,
    get_panel,
    list_panels,
    panel_for_family,
    register_panel,
)

__all__ = [
    "HUMAN_PROFILE_ID",
    "MEASURE_VERSION",
    "NO_RELIABLE_JUDGE",
    "CriterionOutcome",
    "CriterionStatus",
    "Eligibility",
    "EligibilityFn",
    "Evidence",
    "FrameImage",
    "Judge",
    "JudgeFactory",
    "JudgeFailure",
    "JudgeInput",
    "JudgePanel",
    "JudgeProfile",
    "JudgeRegistry",
    "MaskImage",
    "MaskKind",
    "MeasurementMemo",
    "Outcome",
    "OutcomeStatus",
    "PanelResult",
    "Verdict",
    "VerdictStatus",
    "Vote",
    "create_judge",
    "decide_criterion",
    "decide_outcome",
    "evaluate",
    "get_panel",
    "get_profile",
    "human_verdict",
    "is_eligible",
    "list_panels",
    "list_profiles",
    "mask_kind",
    "panel_for_family",
    "register_judge_kind",
    "register_panel",
    "register_profile",
    "registry",
]
