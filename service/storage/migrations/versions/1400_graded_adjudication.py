"""graded criteria and adjudication: levels, adjudications, rubric scores.

``verdicts.level`` and ``criterion_outcomes.level`` keep the level of a graded criterion;
``adjudications`` keeps every adjudication of a disputed criterion (why, what the adjudicator
was shown, its prompt and reply, trust and result); ``rubric_scores`` keeps a graded task's
score, levels, bounds, threshold and verdict per evaluation.

Revision ID: 1400_graded_adjudication
Revises: 1000_gate_set_size
"""

from __future__ import annotations

from service.storage.migrations.ddl import (
    add_columns,
    create_table,
    drop_columns,
    drop_tables,
)

revision = "1400_graded_adjudication"
down_revision = "1000_gate_set_size"


def upgrade() -> None:
    """Add the two level columns and the two tables."""
    add_columns("verdicts", "level int null")
    add_columns("criterion_outcomes", "level int null")
    create_table(
        "adjudications",
        "id int",
        "evaluation_id int",
        "criterion str(50)",
        "adjudicator_id str(200)",
        "adjudicator_hash str(64)",
        "reason text",
        "answers json",
        "trusted bool",
        "result str(40)",
        "status str(20) null",
        "level int null",
        "evidence json null",
        "failure_cause str(100) null",
        "failure_detail text null",
        "prompt_version str(100) null",
        "prompt_artifact_id int null",
        "raw_artifact_id int null",
        keys=(
            "evaluation_id -> evaluations",
            "prompt_artifact_id -> artifacts",
            "raw_artifact_id -> artifacts",
        ),
        indexes=("evaluation_id",),
    )
    create_table(
        "rubric_scores",
        "id int",
        "evaluation_id int",
        "name str(50)",
        "formula text",
        "score float null",
        "score_text str(40) null",
        "arithmetic text null",
        "threshold float",
        "threshold_met bool null",
        "max_score float",
        "levels json",
        "bounds json",
        "missing json",
        "verdict str(16)",
        keys=("unique evaluation_id", "evaluation_id -> evaluations"),
    )


def downgrade() -> None:
    """Drop the tables and the level columns."""
    drop_tables("rubric_scores", "adjudications")
    drop_columns("criterion_outcomes", "level")
    drop_columns("verdicts", "level")
