"""A real S3 server on loopback for the tests: moto in server mode, one per session.

Loaded by ``tests/conftest.py`` (``pytest_plugins``). The ``s3_server`` fixture starts moto's
``ThreadedMotoServer`` on loopback port 0 (the kernel picks a port that no other xdist worker's
server can take; skipping with the reason when it cannot start), one per worker, and
``s3_bucket`` gives the test a fresh bucket; the code under test talks to it over HTTP through
boto3 as it would to MinIO or AWS. Credentials are throwaway values in the standard ``AWS_*``
variables.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from regua.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "regua-test-key",
    "AWS_SECRET_ACCESS_KEY": "regua-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """The running server: its endpoint and a boto3 client of its own (for the tests' eyes)."""

    endpoint: str
    client: S3Client

    def new_bucket(self) -> str:
        """Create a bucket with a unique name; its name."""
        name = f"regua-{uuid.uuid4().hex[:12]}"
        self.client.create_bucket(Bucket=name)
        return name

    def settings(self, data_dir: Path, bucket: str, **extra: Any) -> Settings:
        """Settings that keep artifacts in ``s3://BUCKET/runs`` on this server."""
        return Settings(
            data_dir=data_dir,
            artifacts_url=f"s3://{bucket}/runs",
            s3_endpoint_url=self.endpoint,
            s3_region=REGION,
            **extra,
        )

    def keys(self, bucket: str) -> list[str]:
        """Every object key in ``bucket``."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server on a loopback port for the whole session (skips when it can't)."""
    try:
        import boto3
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        pytest.skip(f"moto[server] is not installed ({exc}); run scripts/setup.sh")
    saved = {name: os.environ.get(name) for name in FAKE_CREDENTIALS}
    os.environ.update(FAKE_CREDENTIALS)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    try:
        server.start()
        host, port = server.get_host_and_port()
    except Exception as exc:  # any reason the server cannot start is a reason to skip
        _restore(saved)
        pytest.skip(f"moto's S3 server could not start on 127.0.0.1: {exc}")
    endpoint = f"http://{host}:{port}"
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=REGION)
    try:
        yield S3Server(endpoint, client)
    finally:
        client.close()
        server.stop()
        _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A fresh, empty bucket on the session's server."""
    return s3_server.new_bucket()
