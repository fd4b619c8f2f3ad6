"""regua judges: the judge protocol, built-in judges, the jury and ``evaluate``.

Import surface used by the service and by calibration::

    from judges import evaluate, panel_for_family, Verdict, JudgeProfile, ...
"""

from judges.base import Judge, JudgeFactory, JudgeRegistry
from judges.default_registry import (
    create_judge,
    get_profile,
    list_profiles,
    register_judge_kind,
    register_profile,
    registry,
)
from judges.evaluate import ask_judges, evaluate, panel_record, seat_panel
from judges.human import HUMAN_PROFILE_ID, human_verdict
from judges.inputs import (
    CheckEvidence,
    CheckFinding,
    CheckSummary,
    EvalInput,
    FrameImage,
    JudgeInput,
    MaskImage,
    MaskKind,
    RenderStatus,
    RenderSummary,
    mask_kind,
)
from judges.judge_files import (
    add_judge_file,
    load_configured,
    load_judges_dir,
    require_panel,
    source_of,
)
from judges.jury import (
    JUDGE_FAILURE,
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
    JudgeAnswers,
    JudgeFailure,
    JudgeProfile,
    Outcome,
    OutcomeStatus,
    PanelRecord,
    PanelResult,
    SeatedJudge,
    Verdict,
    VerdictStatus,
    Vote,
)
from judges.panel import (
    JudgePanel,
    get_panel,
    list_panels,
    panel_for_family,
    panel_for_task,
    register_panel,
)
from judges.profiles import parse_judge_text

__all__ = [
    "HUMAN_PROFILE_ID",
    "JUDGE_FAILURE",
    "MEASURE_VERSION",
    "NO_RELIABLE_JUDGE",
    "CheckEvidence",
    "CheckFinding",
    "CheckSummary",
    "CriterionOutcome",
    "CriterionStatus",
    "Eligibility",
    "EligibilityFn",
    "EvalInput",
    "Evidence",
    "FrameImage",
    "Judge",
    "JudgeAnswers",
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
    "PanelRecord",
    "PanelResult",
    "RenderStatus",
    "RenderSummary",
    "SeatedJudge",
    "Verdict",
    "VerdictStatus",
    "Vote",
    "add_judge_file",
    "ask_judges",
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
    "load_configured",
    "load_judges_dir",
    "mask_kind",
    "panel_for_family",
    "panel_for_task",
    "panel_record",
    "parse_judge_text",
    "register_judge_kind",
    "register_panel",
    "register_profile",
    "registry",
    "require_panel",
    "seat_panel",
    "source_of",
]
