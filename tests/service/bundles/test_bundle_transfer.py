"""Acceptance: runs leave a SQLite installation as a bundle and arrive whole in PostgreSQL + S3.

The source runs go through the real pipeline (bubblewrap sandbox, Chromium frames, the default
panel) and one of them gets a review label. ``regua export`` writes the bundle from the SQLite
data folder; ``regua import bundle`` restores it into an installation on PostgreSQL with its
artifacts in S3 (moto server). Every run, verdict and artifact hash must be equal there, a
second import stores nothing, and re-scoring the imported runs renders nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.evaluation.rescore import rescore
from service.pipeline.rerender import rerenderer
from service.pipeline.submit import Submission
from service.review.actions import label_item, reviewer_of
from service.storage import Artifact, Evaluation, RenderRecord, ReviewItem, ReviewRow, Run
from service.storage.s3_blobs import S3BlobStore
from tests.helpers.bundles import run_facts
from tests.helpers.pg import reset_pg_schema
from tests.helpers.runs import TASK, CountingRenderer, machinery
from tests.helpers.s3 import S3Server
from tests.service.conftest import GOOD, drain

pytestmark = [pytest.mark.sandbox, pytest.mark.browser, pytest.mark.postgres]

PANEL = "static-only@1"
FRAMES = select(func.count(Artifact.id)).where(Artifact.kind == "frame")
BAD = GOOD.replace("</svg>", "<script>alert(1)</script></svg>")


@dataclass
class Source:
    """The SQLite installation's data folder, its run ids and the facts of each run."""

    data_dir: Path
    runs: list[str]
    facts: dict[str, Any]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, render_pool: WorkerPool) -> Iterator[Source]:
    """Three real runs (two models; one fails by rule) and one review label, on SQLite."""
    data = tmp_path_factory.mktemp("bundle-source") / "data"
    ctx = ServiceContext.open(Settings(data_dir=data), render_pool=render_pool)
    try:
        subs = [
            Submission(TASK, "model-a", GOOD),
            Submission(TASK, "model-a", GOOD.replace("</svg>", "<!-- 2 --></svg>")),
            Submission(TASK, "model-b", BAD),
        ]
        ids = ctx.submit(subs, None)
        drain(ctx)
        _, admin = create_token(ctx.db, "admin", "ada")
        with ctx.db.write() as s:
            item = s.scalars(select(ReviewItem.id).order_by(ReviewItem.id)).first()
            assert item is not None, "the default panel leaves a criterion for people"
            label_item(s, ctx.blobs, item, reviewer_of(admin), "pass", "looks right", None)
        with ctx.db.read() as s:
            facts = run_facts(s, ctx.blobs, ids)
        yield Source(data, ids, facts)
    finally:
        ctx.close()


def _cli(*args: str, env: dict[str, str] | None = None) -> str:
    got = CliRunner().invoke(app, list(args), env=env or {})
    assert got.exit_code == 0, got.output
    return got.output


def _target_env(settings: Settings, pg: str) -> dict[str, str]:
    return {
        "REGUA_DATA_DIR": str(settings.data_dir),
        "REGUA_DATABASE_URL": pg,
        "REGUA_ARTIFACTS_URL": str(settings.artifacts_url),
        "REGUA_S3_ENDPOINT_URL": str(settings.s3_endpoint_url),
        "REGUA_S3_REGION": str(settings.s3_region),
    }


def test_export_sqlite_import_postgres_s3_equal_and_rescored_without_rendering(
    source: Source,
    tmp_path: Path,
    pg_url: str,
    s3_server: S3Server,
    s3_bucket: str,
    render_pool: WorkerPool,
) -> None:
    bundle = tmp_path / "runs.tar.gz"
    said = _cli("export", "--task", TASK, "--out", str(bundle), "--data-dir", str(source.data_dir))
    assert "exported 3 runs" in said and "1 reviews" in said
    reset_pg_schema(pg_url)
    settings = s3_server.settings(tmp_path / "target", s3_bucket, database_url=pg_url)
    env = _target_env(settings, pg_url)
    first = _cli("import", "bundle", str(bundle), env=env)
    assert "imported 3 runs (0 already here)" in first and "every hash verified" in first
    again = _cli("import", "bundle", str(bundle), env=env)
    assert "imported 0 runs (3 already here)" in again
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    try:
        assert isinstance(ctx.blobs, S3BlobStore) and ctx.db.engine.dialect.name == "postgresql"
        with ctx.db.read() as s:
            assert run_facts(s, ctx.blobs, source.runs) == source.facts
            assert s.scalar(select(func.count(ReviewRow.id))) == 1
            before_renders = s.scalar(select(func.count(RenderRecord.id)))
            before_frames = s.scalar(
                select(func.count(Artifact.id)).where(Artifact.kind == "frame")
            )
        counting = CountingRenderer(ctx.settings, render_pool)
        rerender = rerenderer(ctx.db, ctx.blobs, machinery(ctx, counting))
        result = rescore(
            ctx.db, ctx.blobs, task_ref=TASK, panel_id="static-only@1", rerender=rerender
        )
        assert sorted(a[0] for a in result.appended) == sorted(source.runs) and not result.skipped
        assert result.rerendered == [] and counting.calls == 0  # rendered nothing
        with ctx.db.read() as s:
            assert s.scalar(select(func.count(RenderRecord.id))) == before_renders
            assert s.scalar(FRAMES) == before_frames
            kinds = dict(
                s.execute(
                    select(Run.id, Evaluation.kind).join(
                        Evaluation, Evaluation.id == Run.current_evaluation_id
                    )
                ).all()
            )
            assert set(kinds.values()) == {"rescore"}
    finally:
        ctx.close()
    said = _cli("rescore", "--task", TASK, "--panel", PANEL, env=env)  # the command, too
    assert "3 evaluations appended" in said and "rendered nothing" in said


def test_a_tampered_bundle_is_refused_whole(source: Source, tmp_path: Path) -> None:
    from tests.helpers.bundles import tamper_artifact

    bundle = tmp_path / "runs.tar.gz"
    _cli("export", "--task", TASK, "--out", str(bundle), "--data-dir", str(source.data_dir))
    bad = tamper_artifact(bundle.read_bytes())
    (tmp_path / "bad.tar.gz").write_bytes(bad)
    target = tmp_path / "target"
    got = CliRunner().invoke(
        app, ["import", "bundle", str(tmp_path / "bad.tar.gz"), "--data-dir", str(target)]
    )
    assert got.exit_code == 2 and "sha256" in got.output, got.output
    ctx = ServiceContext.open(Settings(data_dir=target))
    try:
        with ctx.db.read() as s:
            assert s.scalar(select(func.count(Run.id))) == 0  # nothing stored
    finally:
        ctx.close()
    assert hashlib.sha256(bad).hexdigest() != hashlib.sha256(bundle.read_bytes()).hexdigest()
