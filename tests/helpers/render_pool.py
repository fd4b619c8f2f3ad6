"""Session-wide sandboxed render pool, shared by every test area.

Loaded by ``tests/conftest.py`` (``pytest_plugins``). Use the ``render_pool`` fixture to render
through the real path (bubblewrap sandbox, uid nobody, no network, Chromium with its own sandbox,
timing self-test at worker start). Tests skip with a clear reason only when Chromium or bubblewrap
is absent on the machine.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from regua.settings import Settings

if TYPE_CHECKING:
    from sandbox import WorkerPool

CHROMIUM = Path("/usr/bin/chromium")
POOL_SIZE = 2
JOB_TIMEOUT_S = 30.0


def render_pool_unavailable() -> str | None:
    """Why the sandboxed renderer cannot run here, or ``None`` when it can."""
    if not CHROMIUM.exists():
        return f"Debian Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) not installed (apt-get install bubblewrap)"
    from sandbox import get_backend

    ok, why = get_backend("bubblewrap").check()
    return None if ok else f"bubblewrap backend unusable here: {why}"


def render_settings() -> Settings:
    """Settings of the shared test pool (explicit, whatever the environment says)."""
    return Settings(
        sandbox_backend="bubblewrap",
        chromium_path=CHROMIUM,
        render_workers=POOL_SIZE,
        worker_max_jobs=400,
        job_timeout_s=JOB_TIMEOUT_S,
        job_retries=1,
    )


@pytest.fixture(scope="session")
def render_pool() -> Iterator[WorkerPool]:
    """One warm pool of sandboxed render workers (``sandbox.WorkerPool``) for the session."""
    reason = render_pool_unavailable()
    if reason is not None:
        pytest.skip(reason)
    from service.pipeline.render_client import create_pool

    pool = create_pool(render_settings(), size=POOL_SIZE)
    try:
        yield pool
    finally:
        pool.close()
