"""Typed settings for the whole service, read from the environment with the prefix ``REGUA_``.

A list setting takes a comma-separated value (``REGUA_WEB_ORIGINS=https://a,https://b``) or a
JSON list. A value that does not parse stops :func:`load_settings` with one line per setting
naming the variable and the form it expects (:mod:`regua.setting_errors`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from regua.llm.keys import parse_bindings
from regua.setting_errors import settings_error, split_list

MAX_DEFAULT_RENDER_WORKERS = 8
DEFAULT_KEY_BINDINGS = (
    "OPENAI_API_KEY=openai",
    "ANTHROPIC_API_KEY=anthropic",
    "OPENROUTER_API_KEY=openai@https://openrouter.ai/api/v1",
)


WorkerLane = Literal["render", "heavy", "judge"]
WORKER_LANES: tuple[WorkerLane, ...] = ("render", "heavy", "judge")
"""The procrastinate workers a process can run (``REGUA_WORKER_LANES``)."""


def default_render_workers() -> int:
    """One render worker per CPU plus one (at most ``MAX_DEFAULT_RENDER_WORKERS``).

    A worker spends part of every job waiting for Chromium's frame clock and on pipe round trips;
    with exactly one worker per CPU the CPUs were measured ~80 % busy on static jobs, with one
    more the pool keeps them busy (``benchmarks/render.py --workers N`` shows the difference).
    """
    return min((os.cpu_count() or 1) + 1, MAX_DEFAULT_RENDER_WORKERS)


class Settings(BaseSettings):
    """All knobs of regua. Every field can be set as ``REGUA_<FIELD>`` (upper case)."""

    model_config = SettingsConfigDict(
        env_prefix="REGUA_", env_file=None, extra="ignore", enable_decoding=False
    )

    data_dir: Path = Field(default=Path("data"), description="Folder for SQLite and artifacts")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default is SQLite inside data_dir"
    )
    artifact_dir: Path | None = Field(default=None, description="Default: data_dir/artifacts")
    host: str = "127.0.0.1"
    port: int = 8000

    sandbox_backend: str = "bubblewrap"
    chromium_path: Path = Path("/usr/bin/chromium")
    render_workers: int = Field(default_factory=default_render_workers)
    worker_max_jobs: int = Field(
        default=500, description="Recycle a render worker after this many jobs (cold start ~4 s)"
    )
    worker_max_rss_mb: int = 1500
    job_timeout_s: float = Field(
        default=30.0,
        description="Wall-clock limit of a sandbox job without a CPU budget (self-test, doctor)",
    )
    render_wall_factor: float = Field(
        default=10.0,
        ge=1.5,
        le=50,
        description="A render's wall-clock safety stop, in multiples of its CPU budget",
    )
    job_retries: int = 2
    sandbox_memory_mb: int = 4096
    sandbox_memory_sample_s: float = Field(
        default=0.1, gt=0, description="How often the watchdog samples a sandbox tree's memory"
    )
    sandbox_cgroup: str = Field(
        default="auto",
        description="cgroup v2 memory cap of each sandbox tree: auto, off, or a delegated folder",
    )
    sandbox_max_output_mb: int = 64

    queue_capacity: int = 1000
    max_body_bytes: int = 2_000_000
    submitter_queue_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Fraction of queue_capacity one token's unfinished runs may occupy",
    )
    submit_rate_per_minute: float = Field(
        default=120.0, ge=0, description="Submission requests per token per minute (0: no limit)"
    )
    submit_burst: int = Field(
        default=20, ge=1, description="Submission requests a token may send in a row"
    )
    experiment_cases_per_token: int = Field(
        default=2000,
        ge=1,
        description="Experiment cases (arms x items x repeats) not generated yet that one "
        "token's experiments may have at once; one experiment larger is refused (422)",
    )

    review_audit_rate: float = 0.05
    reviews_per_item: int = 1
    reviews_per_audit_item: int = 2

    gate_min_macro_f1: float = 0.5
    gate_max_missed_critical_rate: float = 0.05

    secret_file: Path | None = Field(
        default=None,
        description="The installation secret (keys token hashes, sessions, CSRF and review "
        "blinding); default data_dir/secret, created 0600 on first start",
    )
    session_ttl_s: int = Field(
        default=12 * 3600, ge=60, description="Lifetime of a web login session, in seconds"
    )
    web_origins: list[str] = Field(
        default_factory=list,
        description="Origins (scheme://host[:port]) the web forms accept besides the one a "
        "request was addressed to, e.g. https://regua.example behind a TLS proxy",
    )

    judge_base_url: str | None = None
    judge_api_key: str | None = Field(default=None, repr=False)
    judge_model: str | None = None
    judge_timeout_s: float = 60.0
    judges_dir: Path | None = Field(
        default=None,
        description="Folder of judge files (YAML profiles and panels) loaded at start; "
        "`regua judges add FILE` copies files there",
    )
    panel: str | None = Field(
        default=None,
        description="The judge panel of the service (ID@VERSION); default: each task "
        "version's own default panel",
    )
    tasks_dir: Path | None = Field(
        default=None,
        description="Folder of task files and templates (YAML/JSON) registered into the task "
        "store at start",
    )

    queue: Literal["auto", "embedded", "procrastinate"] = Field(
        default="auto",
        description="Dispatcher of pipeline stages: embedded (in-process executor), "
        "procrastinate (PostgreSQL jobs run by `regua worker`), auto (procrastinate on PostgreSQL)",
    )
    serve_worker: bool = Field(
        default=True, description="`regua serve` also runs pipeline work (off: --no-worker)"
    )
    queue_stalled_s: float = Field(
        default=30.0,
        gt=0,
        description="A `doing` job whose worker sent no heartbeat this long "
        "is retried (procrastinate)",
    )
    queue_render_concurrency: int = Field(
        default=0,
        ge=0,
        description="Render-queue jobs one worker runs at once (0: 2 per render worker)",
    )
    queue_heavy_concurrency: int = Field(
        default=0,
        ge=0,
        description="Heavy-lane renders (animated, filter-laden) one process runs at once, "
        "embedded or on the render_heavy queue (0: one less than the render workers, at least "
        "1), so cheap runs always find a render worker",
    )
    queue_judge_concurrency: int = Field(
        default=4, ge=1, description="Judge- and generate-queue jobs one worker runs at once"
    )
    worker_lanes: list[WorkerLane] = Field(
        default_factory=lambda: list(WORKER_LANES),
        min_length=1,
        description="The procrastinate workers a process runs: render (checks, cheap renders), "
        "heavy (renders of the heavy lane), judge (judges, generation, maintenance); "
        "comma-separated",
    )

    def heavy_concurrency(self) -> int:
        """Heavy-lane renders one process runs at once (see ``queue_heavy_concurrency``)."""
        return self.queue_heavy_concurrency or max(1, self.render_workers - 1)

    judge_fleet_limit: int = Field(
        default=8,
        ge=1,
        description="Model calls in flight per endpoint (API + base URL), judges and "
        "generation together, across all processes (a lease table in PostgreSQL)",
    )
    artifacts_url: str | None = Field(
        default=None,
        description="Where artifacts live: a folder path or file://PATH (local), or "
        "s3://BUCKET/PREFIX (an S3-compatible store); default: the local artifact_dir",
    )
    s3_endpoint_url: str | None = Field(
        default=None,
        description="Endpoint of the S3-compatible store (MinIO, Ceph); unset: AWS. Credentials "
        "come from the standard AWS variables or files, never from regua's settings",
    )
    s3_region: str | None = Field(default=None, description="Region of the S3 store")
    pairwise_min_comparisons: int = Field(
        default=20,
        ge=0,
        description="Pairwise ranking: a model with fewer comparisons is shown as preliminary",
    )

    generation_concurrency: int = Field(
        default=4,
        ge=1,
        le=256,
        description="Model calls in flight at once per endpoint (API + base URL) in one "
        "process, judges and generation together",
    )
    generation_rate_per_minute: float = Field(
        default=0.0, ge=0, description="Calls per minute per model provider (0: no limit)"
    )
    generation_max_attempts: int = Field(
        default=4, ge=1, le=20, description="Attempts per generation call (429, 5xx, timeouts)"
    )
    generation_backoff_s: float = Field(
        default=1.0, ge=0, description="First wait between attempts (then doubling)"
    )
    generation_max_retry_after_s: float = Field(
        default=120.0, ge=0, description="Longest Retry-After of a provider that is obeyed"
    )
    generation_base_urls: list[str] = Field(
        default_factory=list,
        description="Base URLs a submitter may generate against besides each API's default "
        "(admins may use any); e.g. http://127.0.0.1:11434/v1",
    )
    generation_key_envs: list[str] = Field(
        default_factory=lambda: list(DEFAULT_KEY_BINDINGS),
        description="Key variables and the endpoints each may be sent to, one entry "
        "VAR=API[@BASE_URL] per endpoint (e.g. VLLM_KEY=openai@http://gpu:8000/v1); a key goes "
        "nowhere else, and a submitter may name only these (admins: any other, too)",
    )
    price_table: Path | None = Field(
        default=None,
        description="YAML price table (version, per api+model USD per million tokens) for "
        "the cost of generations; without it costs are not available",
    )

    @field_validator("*", mode="before")
    @classmethod
    def _list_from_text(cls, value: Any, info: ValidationInfo) -> Any:
        """A list setting given as text: a JSON list, or comma-separated items."""
        field = cls.model_fields[info.field_name] if info.field_name else None
        if isinstance(value, str) and field is not None and _is_list(field.annotation):
            return split_list(value)
        return value

    @field_validator("generation_key_envs")
    @classmethod
    def _key_bindings(cls, value: list[str]) -> list[str]:
        parse_bindings(value)  # a bad entry is refused at start, naming the expected form
        return value

    def resolved_database_url(self) -> str:
        """The database URL in force: the configured one, or SQLite inside ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'regua.sqlite3').resolve()}"

    def resolved_artifact_dir(self) -> Path:
        """The artifact folder in force."""
        return self.artifact_dir or (self.data_dir / "artifacts")

    def resolved_secret_file(self) -> Path:
        """The installation secret's file in force."""
        return self.secret_file or (self.data_dir / "secret")


def _is_list(annotation: Any) -> bool:
    return getattr(annotation, "__origin__", None) is list


def load_settings() -> Settings:
    """Read settings from the environment.

    A value that does not parse raises :class:`~regua.errors.ConfigurationError` with one line
    per bad setting: the variable, its value and the form it expects.
    """
    try:
        return Settings()
    except ValidationError as exc:
        raise settings_error(exc, Settings.model_fields, Settings.model_config) from None
