"""Local files: the data folder, database, artifacts and secrets are the service user's only."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from regua.settings import Settings
from service.access.tokens import ensure_admin_token
from service.context import ServiceContext
from service.server.app import create_app
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

GOOD = (Path(__file__).resolve().parents[3] / "samples/outputs/structured-good.svg").read_text()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The usual umask 022 (plain ``open``/``mkdir`` would make 0644 files and 0755 folders)."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _submit_one(ctx: ServiceContext) -> None:
    token_file = ensure_admin_token(ctx.db, ctx.settings.data_dir)
    assert token_file is not None
    token = token_file.read_text().strip()
    with (
        serve_in_thread(create_app(ctx)) as url,
        Http(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as client,
    ):
        body = {"task": "pelican-bicycle-structured@1", "model": {"label": "m"}, "output": GOOD}
        assert client.post("/v1/runs", json=body).status_code == 202


def _assert_private(data: Path) -> None:
    assert _mode(data) == 0o700
    files = [p for p in data.rglob("*") if p.is_file()]
    folders = [p for p in data.rglob("*") if p.is_dir()]
    names = {p.name for p in files}
    assert {"regua.sqlite3", "secret", "admin-token"} <= names
    assert any(len(p.name) == 64 for p in files), "the raw reply is stored as an artifact"
    wide = [f"{p} {oct(_mode(p))}" for p in files if _mode(p) != 0o600]
    wide += [f"{p} {oct(_mode(p))}" for p in folders if _mode(p) != 0o700]
    assert wide == []


@pytest.mark.usefixtures("loose_umask")
def test_a_new_installation_is_private_under_umask_022(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = ServiceContext.open(Settings(data_dir=data))
    try:
        _submit_one(ctx)
        _assert_private(data)  # the database with its -wal/-shm, artifacts, secret, token
    finally:
        ctx.close()


@pytest.mark.usefixtures("loose_umask")
def test_an_old_world_readable_installation_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = ServiceContext.open(Settings(data_dir=data))
    _submit_one(ctx)
    ctx.close()
    for path in [data, *data.rglob("*")]:  # as an installation made before the rule left it
        path.chmod(0o755 if path.is_dir() else 0o644)
    ctx = ServiceContext.open(Settings(data_dir=data))
    try:
        assert _mode(data) == 0o700
        assert _mode(data / "regua.sqlite3") == 0o600
        assert _mode(data / "secret") == 0o600
        assert _mode(data / "artifacts") == 0o700
    finally:
        ctx.close()
