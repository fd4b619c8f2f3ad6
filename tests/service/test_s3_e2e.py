"""End to end with artifacts in S3: a real service on loopback over a real S3 server (moto).

One submission goes through the real checker, sandboxed renderer and judges; every artifact of
the run downloads through the API with its sha256 and is an object in the bucket. A damaged
object answers a clear 5xx naming the integrity problem; a bucket that refuses writes refuses
the submission and stores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from sandbox import WorkerPool
from service.access.tokens import create_token
from service.context import ServiceContext
from service.server import create_app
from service.storage import Artifact, Run
from service.storage.s3_blobs import S3BlobStore
from tests.helpers.httpclient import Http
from tests.helpers.runs import TASK
from tests.helpers.s3 import S3Server
from tests.helpers.server import serve_in_thread
from tests.service.conftest import GOOD, drain


@contextlib.contextmanager
def s3_service(
    server: S3Server, bucket: str, data_dir: Path, render_pool: WorkerPool | None = None
) -> Iterator[tuple[ServiceContext, httpx.Client]]:
    """A service with artifacts in ``bucket``, served on loopback, and an admin client."""
    settings = server.settings(data_dir, bucket, render_workers=1)
    ctx = ServiceContext.open(settings, render_pool=render_pool)
    token, _ = create_token(ctx.db, "admin", "admin")
    try:
        with (
            serve_in_thread(create_app(ctx)) as url,
            Http(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client,
        ):
            yield ctx, client
    finally:
        ctx.close()


@pytest.mark.browser
@pytest.mark.sandbox
def test_a_run_keeps_every_artifact_in_s3(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path, render_pool: WorkerPool
) -> None:
    with s3_service(s3_server, s3_bucket, tmp_path / "data", render_pool) as (ctx, client):
        _one_run_in_s3(ctx, client, s3_server, s3_bucket)


def _one_run_in_s3(
    ctx: ServiceContext, client: httpx.Client, s3_server: S3Server, s3_bucket: str
) -> None:
    assert isinstance(ctx.blobs, S3BlobStore)
    body = {"task": TASK, "model": {"label": "m"}, "output": f"```svg\n{GOOD}\n```"}
    r = client.post("/v1/runs", json=body)
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    drain(ctx)
    view = client.get(f"/v1/runs/{run_id}").json()
    assert view["status"] == "done" and view["render"]["status"] == "ok", view
    arts = view["artifacts"]
    kinds = {a["kind"] for a in arts}
    assert {"raw", "extracted", "check_report", "render_log", "frame"} <= kinds
    keys = set(s3_server.keys(s3_bucket))
    for art in arts:
        sha = art["sha256"]
        got = client.get(f"/v1/artifacts/{sha}")
        assert got.status_code == 200, (art, got.text)
        assert hashlib.sha256(got.content).hexdigest() == sha == got.headers["x-content-sha256"]
        assert len(got.content) == art["size"]
        assert f"runs/sha256/{sha[:2]}/{sha[2:]}" in keys
    # a frame's object changed behind regua's back: the API says so instead of serving it
    frame = next(a["sha256"] for a in arts if a["kind"] == "frame")
    key = f"runs/sha256/{frame[:2]}/{frame[2:]}"
    s3_server.client.put_object(Bucket=s3_bucket, Key=key, Body=b"not the frame")
    bad = client.get(f"/v1/artifacts/{frame}")
    assert bad.status_code == 500
    assert bad.json()["error"] == "artifact_integrity"
    assert f"s3://{s3_bucket}/{key}" in bad.json()["detail"]
    assert "damaged" in bad.json()["detail"]


def test_a_bucket_that_refuses_writes_refuses_the_submission(
    s3_server: S3Server, s3_bucket: str, tmp_path: Path
) -> None:
    with s3_service(s3_server, s3_bucket, tmp_path / "data") as (ctx, client):
        s3_server.client.delete_bucket(Bucket=s3_bucket)  # the store goes away after start-up
        body = {"task": TASK, "model": {"label": "m"}, "output": GOOD}
        r = client.post("/v1/runs", json=body)
        with ctx.db.read() as s:  # nothing names bytes that were never written
            runs = s.scalar(select(func.count(Run.id)))
            artifacts = s.scalar(select(func.count(Artifact.id)))
    assert r.status_code == 503
    assert r.json()["error"] == "storage_unavailable"
    assert f"s3://{s3_bucket}/runs" in r.json()["detail"]
    assert runs == 0 and artifacts == 0
