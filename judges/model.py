"""Data types of the judges: verdicts, judge errors, profiles and panel results.

One import place for every judge data type; they live in :mod:`judges.verdicts` (what a judge
answers), :mod:`judges.profile` (how a judge is configured), :mod:`judges.outcomes` (what the
jury and the panel produce) and :mod:`judges.frozen` (canonical JSON). Pure: no I/O.
"""

from judges.frozen import canonical_json
from judges.outcomes import (
    CRITERION_STATUSES,
    CriterionOutcome,
    CriterionStatus,
    JudgeAnswers,
    Outcome,
    OutcomeStatus,
    PanelRecord,
    PanelResult,
    SeatedJudge,
    Vote,
)
from judges.profile import JUDGE_KINDS, JudgeProfile
from judges.verdicts import Evidence, JudgeFailure, Verdict, VerdictStatus

__all__ = [
    "CRITERION_STATUSES",
    "JUDGE_KINDS",
    "CriterionOutcome",
    "CriterionStatus",
    "Evidence",
    "JudgeAnswers",
    "JudgeFailure",
    "JudgeProfile",
    "Outcome",
    "OutcomeStatus",
    "PanelRecord",
    "PanelResult",
    "SeatedJudge",
    "Verdict",
    "VerdictStatus",
    "Vote",
    "canonical_json",
]
