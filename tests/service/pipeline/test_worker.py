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
from service.pipeline.submit import Submission
from service.storage import Run
from tests.helpers.pg import reset_pg_schema
from tests.helpers.server import REPO, require_real_rendering

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


GOOD = (REPO / "samples/outputs/structured-good.svg").read_text()


@pytest.mark.postgres
def test_two_workers_share_the_queue(tmp_path: Path, pg_url: str) -> None:
    require_real_rendering()
    reset_pg_schema(pg_url)
    settings = Settings(data_dir=tmp_path / "data", database_url=pg_url, queue="embedded")
    ctx = ServiceContext.open(settings)
    task = "pelican-bicycle-structured@1"
    ids = ctx.submit([Submission(task, "m", GOOD + " " * i) for i in range(8)], None)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "REGUA_DATABASE_URL": pg_url,
        "REGUA_DATA_DIR": str(settings.data_dir),
        "REGUA_RENDER_WORKERS": "1",
        "REGUA_QUEUE": "embedded",  # the lease executor on PostgreSQL (procrastinate: test_queue)
    }
    cmd = [sys.executable, "-m", "service.cli", "worker", "--threads", "2"]
    workers = [
        subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(2)
    ]
    try:
        deadline = time.monotonic() + 240
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
