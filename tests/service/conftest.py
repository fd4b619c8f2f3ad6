"""Fixtures of the service tests: a real service context (the session's render pool, the real
checker and judges) on the parametrised database, and a live HTTP server with a token per role."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.context import ServiceContext
from service.pipeline.submit import Submission
from service.server import create_app
from tests.helpers.httpclient import Http
from tests.helpers.runs import TASK, CountingRenderer
from tests.helpers.server import serve_in_thread

GOOD = (Path(__file__).resolve().parents[2] / "samples/outputs/structured-good.svg").read_text()


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings with a temp data folder and the parametrised database."""
    return Settings(
        data_dir=tmp_path / "data", database_url=database_url, queue_capacity=8, render_workers=2
    )


@pytest.fixture
def ctx(settings: Settings, render_pool: WorkerPool) -> Iterator[ServiceContext]:
    """A service context rendering on the session's pool (no executor started)."""
    context = ServiceContext.open(settings, render_pool=render_pool)
    yield context
    context.close()


class Api:
    """A live HTTP server over ``ctx`` plus one token per role."""

    def __init__(self, client: httpx.Client, ctx: ServiceContext) -> None:
        self.client = client
        self.ctx = ctx
        self.tokens = {role: create_token(ctx.db, role, role)[0] for role in ("admin", "reviewer")}
        self.tokens["submitter"] = create_token(ctx.db, "submitter", "alice")[0]
        self.tokens["other"] = create_token(ctx.db, "submitter", "bob")[0]

    def h(self, role: str) -> dict[str, str]:
        """Authorization header for a role."""
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def drain(self) -> None:
        """Run every queued run to its end on this thread."""
        drain(self.ctx)


def drain(ctx: ServiceContext) -> None:
    """Process queued runs until none is left (the executor's threads are not started)."""
    from service.pipeline.executor import Executor

    ctx.gate.ttl_s = 0.0  # a decision stored by the test counts at once
    ex = Executor(ctx.db, ctx.blobs, ctx.machinery, threads=1)
    while ex.run_once():
        pass


@pytest.fixture
def api(ctx: ServiceContext) -> Iterator[Api]:
    """The app over ``ctx`` on a real HTTP server (runs stay queued unless a test drains)."""
    with (
        serve_in_thread(create_app(ctx)) as url,
        Http(base_url=url, timeout=60) as client,
    ):
        yield Api(client, ctx)


@dataclass
class World:
    """Three finished runs of the structured task through the real pipeline, and the app over
    them on a live HTTP server (one client per role, closed after the test)."""

    ctx: ServiceContext
    ids: list[str]
    renderer: CountingRenderer
    url: str
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, role: str) -> httpx.Client:
        """A client with a fresh token of ``role``."""
        token, _ = create_token(self.ctx.db, role, role)
        http = Http(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=120)
        self.clients.append(http)
        return http


@pytest.fixture
def world(ctx: ServiceContext, render_pool: WorkerPool) -> Iterator[World]:
    """See :class:`World` (SQLite, and PostgreSQL when it answers)."""
    renderer = CountingRenderer(ctx.settings, render_pool)
    ctx.renderer = renderer
    subs = [Submission(TASK, "m", GOOD.replace("</svg>", f"<!-- {i} --></svg>")) for i in range(3)]
    ids = ctx.submit(subs, None)
    drain(ctx)
    with serve_in_thread(create_app(ctx)) as url:
        found = World(ctx, ids, renderer, url)
        yield found
        for http in found.clients:
            http.close()


@dataclass(frozen=True)
class Calibrated:
    """A data folder in which ``regua calibrate --judge geometry@1 --set bundled`` was run."""

    data_dir: Path
    output: str
    """What the command printed."""
    run_file: Path
    """The run it wrote with ``--out``."""


@pytest.fixture(scope="session")
def geometry_calibrated(tmp_path_factory: pytest.TempPathFactory) -> Calibrated:
    """The README's calibration step, once per session, through the CLI and the real pipeline
    (its own render pool; the renders are kept in the data folder)."""
    from typer.testing import CliRunner

    from service.cli import app
    from tests.helpers.server import require_real_rendering

    require_real_rendering()
    data = tmp_path_factory.mktemp("calibrated") / "data"
    out = data.parent / "run.json"
    args = ["calibrate", "--judge", "geometry@1", "--set", "bundled", "--data-dir", str(data)]
    result = CliRunner().invoke(
        app, [*args, "--out", str(out)], env={"REGUA_RENDER_WORKERS": "2", "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    return Calibrated(data, result.output, out)
