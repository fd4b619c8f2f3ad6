"""``regua worker``: the scale-out process runs the same executor against a shared PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from regua.settings import Settings
from service.context import ServiceContext
from service.db import Run
from service.submission import Submission, submit
from tests.service.conftest import _reset_pg
from tests.service.proc import REPO

GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()


@pytest.mark.postgres
def test_two_workers_share_the_queue(tmp_path: Path, pg_url: str) -> None:
    _reset_pg(pg_url)
    settings = Settings(data_dir=tmp_path / "data", database_url=pg_url)
    ctx = ServiceContext.open(settings)
    task = "pelican-bicycle-structured@1"
    ids = submit(ctx, [Submission(task, "m", GOOD + " " * i) for i in range(12)], None)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "REGUA_DATABASE_URL": pg_url,
        "REGUA_DATA_DIR": str(settings.data_dir),
    }
    cmd = [sys.executable, "-m", "service.cli", "worker", "--threads", "2"]
    cmd += ["--components", "tests.service.fakes:fake_components"]
    workers = [
        subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(2)
    ]
    try:
        deadline = time.monotonic() + 120
        done = 0
        while time.monotonic() < deadline and done < len(ids):
            with ctx.db.read() as s:
                done = int(s.scalar(select(func.count()).where(Run.status == "done")) or 0)
            time.sleep(0.3)
        assert done == len(ids)
        with ctx.db.read() as s:
            outcomes = set(s.scalars(select(Run.outcome)))
            claims = list(s.scalars(select(Run.claims)))
        assert outcomes == {"pending"} and set(claims) == {1}  # each run claimed exactly once
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            out, _ = w.communicate(timeout=60)
            assert b"regua worker" in out
        ctx.close()
