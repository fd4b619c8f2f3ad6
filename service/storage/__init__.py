"""Storage: typed SQLAlchemy models, the engine with migrations on start-up, sessions, blobs."""

from service.storage.access_models import WebSession
from service.storage.engine import Database, upgrade
from service.storage.experiment_models import ExperimentCaseRow, ExperimentRow
from service.storage.generation_models import GenerationJobRow, GenerationRow, ModelCallRow
from service.storage.grading_models import AdjudicationRow, RubricScoreRow
from service.storage.models import (
    ApiToken,
    Artifact,
    Base,
    CheckResultRow,
    CriterionOutcomeRow,
    Evaluation,
    JudgeFailureRow,
    RenderRecord,
    Run,
    StageAttempt,
    StageRecord,
    TaskRow,
    VerdictRow,
    iso,
    utcnow,
)
from service.storage.pairwise_models import PairwiseComparisonRow, PairwisePreferenceRow
from service.storage.pool_models import LeakFlag, TaskRetirement
from service.storage.review_models import ReviewItem, ReviewRow, ReviewScan
from service.storage.scoring_models import (
    CalibrationRunRow,
    GateDecisionRow,
    RescoreBatch,
    RescoreItem,
)
from service.storage.task_store_models import TaskVersionRow
from service.storage.workflow_models import (
    RunRevisionRow,
    TaskProposalDecisionRow,
    TaskProposalRow,
)

__all__ = [
    "AdjudicationRow",
    "ApiToken",
    "Artifact",
    "Base",
    "CalibrationRunRow",
    "CheckResultRow",
    "CriterionOutcomeRow",
    "Database",
    "Evaluation",
    "ExperimentCaseRow",
    "ExperimentRow",
    "GateDecisionRow",
    "GenerationJobRow",
    "GenerationRow",
    "JudgeFailureRow",
    "LeakFlag",
    "ModelCallRow",
    "PairwiseComparisonRow",
    "PairwisePreferenceRow",
    "RenderRecord",
    "RescoreBatch",
    "RescoreItem",
    "ReviewItem",
    "ReviewRow",
    "ReviewScan",
    "RubricScoreRow",
    "Run",
    "RunRevisionRow",
    "StageAttempt",
    "StageRecord",
    "TaskProposalDecisionRow",
    "TaskProposalRow",
    "TaskRetirement",
    "TaskRow",
    "TaskVersionRow",
    "VerdictRow",
    "WebSession",
    "iso",
    "upgrade",
    "utcnow",
]
