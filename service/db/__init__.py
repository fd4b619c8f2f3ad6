"""Storage: typed SQLAlchemy models, the engine with migrations on start-up, sessions."""

from service.db.engine import Database, upgrade
from service.db.models import (
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
    utcnow,
)

__all__ = [
    "ApiToken",
    "Artifact",
    "Base",
    "CheckResultRow",
    "CriterionOutcomeRow",
    "Database",
    "Evaluation",
    "JudgeFailureRow",
    "RenderRecord",
    "Run",
    "StageAttempt",
    "StageRecord",
    "TaskRow",
    "VerdictRow",
    "upgrade",
    "utcnow",
]
