"""Issue 25, point 2: one judging configuration per experiment.

``regua experiment run FILE`` submits the file to the running service over HTTP and follows it;
it never judges in its own process (it is given no judge settings at all here). The service is
configured with a fake vision model (a real local HTTP server answering from
``regua.llm.testing``) whose identity the gate trusts: every vote on every run of the experiment
comes from that identity or the static rules, and the experiment records the panel and the
identity it resolved when it started. The same file against a service whose vision model was
never calibrated refuses to start (422) naming the judge; with no service, the command says to
start one and exits non-zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

import judges
from judges.calibration.gate import GateDecision
from regua.llm.testing import FrameTruth, serving
from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.evaluation.gate import store_decisions
from service.experiments.store import get_experiment, plan_of
from service.server import create_app
from service.storage import ExperimentCaseRow
from tests.helpers.httpclient import Http
from tests.helpers.ports import free_port
from tests.helpers.server import serve_in_thread

pytestmark = [pytest.mark.heavy, pytest.mark.browser, pytest.mark.sandbox]
TASK = "pelican-bicycle-structured@1"
PANEL = "family-default@1"
VISION = "vision-llm-openai@1"
FILE = f"""
id: judged
items: [{TASK}]
repeats: 3
panel: {PANEL}
arms:
  - name: a
    model: {{api: mock, model: m-a}}
"""


def _settings(tmp_path: Path, name: str, url: str, model: str) -> Settings:
    return Settings(
        data_dir=tmp_path / name,
        render_workers=1,
        judge_model=model,
        judge_base_url=f"{url}/v1",
    )


def _identity(settings: Settings) -> judges.JudgeProfile:
    """The profile the service's vision judge votes under (its model completes it)."""
    return judges.seat_panel(judges.require_panel(PANEL), settings)[VISION].profile


def _trust(ctx: ServiceContext, profile: judges.JudgeProfile) -> None:
    """Store the gate's ``trusted`` decision for the judge on every criterion it judges."""
    task = ctx.registry.get(TASK)
    decisions = [
        GateDecision(
            profile_id=profile.id,
            criterion=c.id,
            task_family=task.family,
            passed=True,
            reasons=(),
            metrics={},
            thresholds={},
            gate_id="test-gate@1",
            set_id="test-set",
            split_seed=None,
            decided_at="2026-01-01T00:00:00+00:00",
            profile_hash=profile.content_hash(),
            status="trusted",
            set_size=10,
        )
        for c in task.criteria
        if c.id != "F1"
    ]
    with ctx.db.write() as s:
        store_decisions(s, decisions)
    ctx.gate.refresh()


@contextmanager
def _service(settings: Settings, pool: WorkerPool, trusted: bool) -> Iterator[tuple[str, str]]:
    """A running service (in-process executor, HTTP on loopback): (url, submitter token)."""
    ctx = ServiceContext.open(settings, render_pool=pool)
    try:
        if trusted:
            _trust(ctx, _identity(settings))
        token = create_token(ctx.db, "submitter", "exp")[0]
        ctx.start_executor()
        with serve_in_thread(create_app(ctx)) as url:
            yield url, token
    finally:
        ctx.close()


def _cli(file: Path, url: str, token: str) -> Any:
    args = ["experiment", "run", str(file), "--url", url, "--token", token, "--wait-s", "600"]
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def test_the_service_judges_every_run_with_the_panel_it_resolved(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    file = tmp_path / "exp.yaml"
    file.write_text(FILE)
    with serving(FrameTruth(default="pass")) as model:
        settings = _settings(tmp_path, "seeing", model.url, "seeing-1")
        identity = _identity(settings)
        with _service(settings, render_pool, trusted=True) as (url, token):
            res = _cli(file, url, token)
            assert res.exit_code == 0, res.output
            assert "starting experiment judged@default" in res.output
            views = _run_views(settings, url, token)
    assert len(views) == 3
    voters: set[str] = set()
    for view in views:
        evaluation = view["evaluation"]
        assert all(f["cause"] != "not_configured" for f in evaluation["judge_failures"])
        for criterion in evaluation["criteria"]:
            voters |= {v["judge_profile_id"] for v in criterion["votes"]}
    assert voters == {"static@1", identity.id}
    assert identity.id.startswith("vision-llm-openai+seeing-1")
    assert model.requests, "the service's vision model was asked"


def _run_views(settings: Settings, url: str, token: str) -> list[dict[str, Any]]:
    """The run view of every run of the experiment; its recorded judging checked on the way."""
    from service.storage import Database

    db = Database(settings.resolved_database_url())
    try:
        plan = plan_of(get_experiment(db, "judged@default"))
        with db.read() as s:
            run_ids = list(s.scalars(select(ExperimentCaseRow.run_id)))
    finally:
        db.dispose()
    recorded = plan.judging[TASK]
    assert recorded.panel == PANEL
    identity = _identity(settings)
    assert recorded.judges[VISION] == f"{identity.id}#{identity.content_hash()[:12]}"
    headers = {"Authorization": f"Bearer {token}"}
    with Http(base_url=url, headers=headers, timeout=60) as client:
        return [client.get(f"/v1/runs/{run_id}").json() for run_id in run_ids]


def test_an_uncalibrated_judge_refuses_the_experiment_naming_it(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    file = tmp_path / "exp.yaml"
    file.write_text(FILE)
    with serving(FrameTruth(default="pass")) as model:
        settings = _settings(tmp_path, "blind", model.url, "blind-1")
        identity = _identity(settings)
        with _service(settings, render_pool, trusted=False) as (url, token):
            res = _cli(file, url, token)
            headers = {"Authorization": f"Bearer {token}"}
            with Http(base_url=url, headers=headers, timeout=60) as client:
                direct = client.post("/v1/experiments", json={"file": FILE})
                stored = client.get("/v1/experiments/judged@default")
    assert res.exit_code != 0
    assert identity.id in res.output and "not trusted by its calibration gate" in res.output
    assert direct.status_code == 422 and direct.json()["error"] == "panel_not_seated"
    assert identity.id in direct.json()["detail"]
    assert stored.status_code == 404  # nothing was stored
    assert not model.requests  # nothing was generated or judged


def test_without_a_service_the_command_says_what_to_start(tmp_path: Path) -> None:
    file = tmp_path / "exp.yaml"
    file.write_text(FILE)
    url = f"http://127.0.0.1:{free_port()}"
    res = _cli(file, url, "no-token")
    assert res.exit_code == 2
    assert "regua serve" in res.output and "make run" in res.output
