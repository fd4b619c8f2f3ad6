"""initial schema.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 19:44:43.065688
"""

from __future__ import annotations

from service.storage.migrations.ddl import create_table, dropping_tables

revision = "0001"
down_revision = None


def upgrade() -> None:
    """Apply this revision."""
    create_table(
        "api_tokens",
        "id int",
        "name str(200)",
        "role str(20)",
        "token_hash str(64)",
        "prefix str(16)",
        "created_at datetime",
        keys=("unique token_hash",),
    )
    create_table(
        "tasks",
        "id int",
        "ref str(200)",
        "task_id str(200)",
        "version int",
        "content_hash str(64)",
        "spec json",
        "created_at datetime",
        keys=("unique ref",),
    )
    create_table(
        "runs",
        "id str(32)",
        "task_ref str(200)",
        "task_pk int",
        "model_label str(200)",
        "model_provider str(200) null",
        "model_params json null",
        "submitted_at datetime",
        "submitted_by int null",
        "batch_id str(32) null",
        "raw_artifact_id int null",
        "status str(16)",
        "outcome str(16) null",
        "outcome_cause text null",
        "current_evaluation_id int null",
        "lease_owner str(200) null",
        "lease_expires_at datetime null",
        "claims int",
        "finished_at datetime null",
        keys=("submitted_by -> api_tokens", "task_pk -> tasks"),
        indexes=(
            "model_label",
            "status submitted_at as ix_runs_status_submitted",
            "submitted_by",
            "task_ref",
        ),
    )
    create_table(
        "artifacts",
        "id int",
        "sha256 str(64)",
        "run_id str(32) null",
        "kind str(32)",
        "name str(200)",
        "media_type str(100)",
        "size int",
        "parent_id int null",
        "procedure_id str(100)",
        "procedure_version str(100)",
        "meta json null",
        "created_at datetime",
        keys=(
            "parent_id -> artifacts",
            "run_id -> runs",
            "unique run_id kind name sha256 as uq_artifacts_key",
        ),
        indexes=("run_id", "sha256"),
    )
    create_table(
        "stage_attempts",
        "id int",
        "run_id str(32)",
        "stage str(32)",
        "version str(200)",
        "error text",
        "created_at datetime",
        keys=("run_id -> runs",),
        indexes=("run_id",),
    )
    create_table(
        "stage_records",
        "id int",
        "run_id str(32)",
        "stage str(32)",
        "version str(200)",
        "status str(16)",
        "detail json null",
        "attempts int",
        "started_at datetime",
        "finished_at datetime",
        keys=("run_id -> runs", "unique run_id stage version as uq_stage_key"),
        indexes=("run_id",),
    )
    create_table(
        "check_results",
        "id int",
        "run_id str(32)",
        "report_artifact_id int null",
        "check_id str(100)",
        "version str(100)",
        "status str(20)",
        "evidence json",
        keys=("report_artifact_id -> artifacts", "run_id -> runs"),
        indexes=("run_id",),
    )
    create_table(
        "render_records",
        "id int",
        "run_id str(32)",
        "status str(16)",
        "cause str(100) null",
        "detail text null",
        "render_profile_id str(100)",
        "browser_version str(100) null",
        "sandbox json null",
        "attempts int",
        "elapsed_ms float null",
        "log_artifact_id int null",
        "created_at datetime",
        keys=("log_artifact_id -> artifacts", "run_id -> runs"),
        indexes=("run_id",),
    )
    create_table(
        "evaluations",
        "id int",
        "run_id str(32)",
        "kind str(20)",
        "supersedes_id int null",
        "task_ref str(200)",
        "rubric_hash str(64)",
        "checker_version str(200)",
        "render_profile_id str(100) null",
        "render_record_id int null",
        "judge_panel json",
        "outcome str(16)",
        "cause text null",
        "reasons json",
        "created_at datetime",
        keys=(
            "render_record_id -> render_records",
            "run_id -> runs",
            "supersedes_id -> evaluations",
        ),
        indexes=("run_id",),
    )
    create_table(
        "criterion_outcomes",
        "id int",
        "evaluation_id int",
        "criterion str(50)",
        "kind str(20)",
        "status str(20)",
        "review_required bool",
        "review_reason text null",
        "votes json null",
        "disagreement text null",
        "cause text null",
        keys=("evaluation_id -> evaluations",),
        indexes=("evaluation_id",),
    )
    create_table(
        "judge_failures",
        "id int",
        "evaluation_id int",
        "criterion str(50)",
        "judge_profile_id str(200)",
        "cause str(100)",
        "detail text",
        keys=("evaluation_id -> evaluations",),
        indexes=("evaluation_id",),
    )
    create_table(
        "verdicts",
        "id int",
        "evaluation_id int",
        "criterion str(50)",
        "judge_profile_id str(200)",
        "status str(20)",
        "evidence json",
        "raw_artifact_id int null",
        "latency_ms float null",
        "usage json null",
        "cost_usd float null",
        "details json null",
        keys=("evaluation_id -> evaluations", "raw_artifact_id -> artifacts"),
        indexes=("evaluation_id",),
    )


downgrade = dropping_tables(
    "verdicts",
    "judge_failures",
    "criterion_outcomes",
    "evaluations",
    "render_records",
    "check_results",
    "stage_records",
    "stage_attempts",
    "artifacts",
    "runs",
    "tasks",
    "api_tokens",
)
