"""Pairwise judging of stored runs end to end: real pipeline runs, a fake vision model on loopback,
stored comparisons with both raw replies, the ranking over HTTP, the CLI and the report page."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from judges.pairwise.vision import VisionPairwiseJudge
from regua.llm.testing import FakeModelServer, Pairwise, serving
from regua.settings import Settings
from service.cli import app
from service.pairwise.calibrate import calibrate_preferences
from service.pairwise.compare import PairRequest, run_pairs
from service.pairwise.ranking import RankingQuery, pairwise_ranking
from service.pairwise.store import comparison_rows
from service.pipeline.submit import Submission
from service.storage import Artifact
from tasks import bundled_registry
from tests.helpers.httpclient import Http
from tests.helpers.runs import TASK
from tests.helpers.web import web_login
from tests.service.conftest import Api

SAMPLES = Path(__file__).resolve().parents[3] / "samples/outputs"
FILES = {
    "alpha": "structured-good.svg",
    "beta": "structured-good-2.svg",
    "gamma": "fail-B1-no-front-wheel.svg",
}
QUALITY = {"alpha": 3, "beta": 2, "gamma": 1}
CRITERION = "B1"


@pytest.fixture
def server() -> Iterator[FakeModelServer[Pairwise]]:
    """The fake vision model's server, which the service's pairwise judge talks to."""
    with serving(Pairwise()) as running:
        yield running


@pytest.fixture
def fake(server: FakeModelServer[Pairwise]) -> Pairwise:
    """The fake vision model (what it prefers, what it was shown)."""
    return server.model


@pytest.fixture
def settings(tmp_path: Path, database_url: str, server: FakeModelServer[Pairwise]) -> Settings:
    """The service's settings, its judge pointed at the fake model."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        queue_capacity=8,
        render_workers=2,
        judge_base_url=server.url,
        judge_model="fake-vision",
    )


def _seed(api: Api, fake: Pairwise) -> dict[str, str]:
    subs = [
        Submission(TASK, m, (SAMPLES / f).read_text(), panel="static-only@1")
        for m, f in FILES.items()
    ]  # the pairwise judge needs frames only: no geometry judging
    ids = dict(zip(FILES, api.ctx.submit(subs, None), strict=True))
    api.drain()
    with api.ctx.db.read() as s:
        frames = s.execute(
            select(Artifact.run_id, Artifact.sha256).where(
                Artifact.run_id.in_(ids.values()), Artifact.kind == "frame"
            )
        ).all()
    model_of = {rid: m for m, rid in ids.items()}
    fake.quality = {sha: QUALITY[model_of[rid]] for rid, sha in frames if rid is not None}
    return ids


def _run(api: Api, fake: Pairwise, mode: str, req: PairRequest) -> tuple[int, int, int]:
    fake.mode = mode
    done = run_pairs(api.ctx.db, api.ctx.blobs, VisionPairwiseJudge(api.ctx.settings), req)
    return done.compared, done.failures, done.position_biased


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PG: test_pairwise_store
def test_pairwise_runs_are_stored_ranked_and_shown(
    api: Api, fake: Pairwise, tmp_path: Path
) -> None:
    ctx = api.ctx
    ids = _seed(api, fake)
    assert _run(api, fake, "prefer", PairRequest(TASK, CRITERION, models=tuple(FILES))) == (3, 0, 0)
    rows = comparison_rows(ctx.db, TASK, CRITERION)
    assert [(r.a_model, r.b_model, r.result, r.first_winner, r.second_winner) for r in rows] == [
        ("alpha", "beta", "a", "X", "Y"),
        ("alpha", "gamma", "a", "X", "Y"),
        ("beta", "gamma", "a", "X", "Y"),
    ]
    shown = "\n".join(fake.prompts)
    assert len(fake.prompts) == 6
    assert not any(word in shown for word in [*FILES, *ids.values()])
    reply = json.loads(ctx.blobs.get(_reply_sha(api, rows[0].second_reply_id)))
    assert reply["order"] == 2 and reply["shown"] == {"X": "b", "Y": "a"}
    assert reply["winner"] == "Y" and json.loads(reply["raw_reply"])["winner"] == "Y"

    req = PairRequest(TASK, CRITERION, run_ids=(ids["alpha"], ids["beta"]))
    assert _run(api, fake, "always_x", req) == (1, 0, 1)
    last = comparison_rows(ctx.db, TASK, CRITERION)[-1]
    assert (last.result, last.position_biased, last.first_winner, last.second_winner) == (
        "tie",
        True,
        "X",
        "X",
    )
    req = PairRequest(TASK, CRITERION, run_ids=(ids["beta"], ids["gamma"]))
    assert _run(api, fake, "garbage", req) == (1, 1, 0)
    failed = comparison_rows(ctx.db, TASK, CRITERION)[-1]
    assert (failed.result, failed.failure_cause, failed.position_biased) == (
        None,
        "unparseable",
        False,
    )
    reply = json.loads(ctx.blobs.get(_reply_sha(api, failed.first_reply_id)))
    assert reply["failure"] == "unparseable" and "Honestly" in reply["raw_reply"]

    _check_http(api)
    _check_cli(api, tmp_path)
    _check_calibrate(api, fake)
    _check_page(api)
    fake.mode = "prefer"
    _check_post(api)
    _check_cli_run(api, ids)


def _reply_sha(api: Api, artifact_id: int | None) -> str:
    with api.ctx.db.read() as s:
        row = s.get(Artifact, artifact_id)
        assert row is not None and row.kind == "pairwise_reply"
        return row.sha256


def _check_http(api: Api) -> None:
    params: dict[str, str | int] = {"task": TASK, "criterion": CRITERION, "resamples": 100}
    got = api.client.get("/v1/pairwise/ranking", params=params, headers=api.h("admin"))
    assert got.status_code == 200, got.text
    doc = got.json()
    assert [m["model"] for m in doc["models"]] == ["alpha", "beta", "gamma"]
    assert (doc["comparisons"], doc["judge_failures"], doc["position_biased"]) == (5, 1, 1)
    alpha = doc["models"][0]
    assert (alpha["wins"], alpha["ties"], alpha["losses"], alpha["comparisons"]) == (2, 1, 0, 3)
    assert alpha["preliminary"]  # 3 < REGUA_PAIRWISE_MIN_COMPARISONS (20)
    cell = {(c["model"], c["opponent"]): c for c in doc["matrix"]}[("alpha", "beta")]
    assert (cell["wins"], cell["ties"], cell["losses"]) == (1, 1, 0)
    assert doc["calibration"]["position_bias_rate"] == 1 / 4
    denied = api.client.get("/v1/pairwise/ranking", params=params, headers=api.h("reviewer"))
    assert denied.status_code == 403
    merged = api.client.get("/v1/pairwise/ranking", params={"task": TASK}, headers=api.h("admin"))
    assert merged.status_code == 422 and "criterion" in merged.text  # rankings are never merged


def _env(api: Api) -> dict[str, str]:
    return {
        "REGUA_DATABASE_URL": api.ctx.settings.resolved_database_url(),
        "REGUA_ARTIFACT_DIR": str(api.ctx.settings.resolved_artifact_dir()),
        "REGUA_JUDGE_BASE_URL": str(api.ctx.settings.judge_base_url),
        "REGUA_JUDGE_MODEL": "fake-vision",
    }


def _check_cli(api: Api, tmp_path: Path) -> None:
    csv = tmp_path / "prefs.csv"
    for name in (FILES["alpha"], FILES["beta"], FILES["gamma"]):  # drawings sit by the CSV
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    csv.write_text(
        "left,right,winner,annotator\n"
        f"{FILES['beta']},{FILES['alpha']},right,ann\n"
        f"{FILES['alpha']},{FILES['gamma']},right,bob\n"
    )
    runner = CliRunner()
    out = runner.invoke(app, ["pairwise", "import", str(csv)], env=_env(api))
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["pairwise", "report", "--resamples", "100"], env=_env(api))
    assert out.exit_code == 0, out.output
    assert f"{TASK} · criterion {CRITERION}" in out.output
    assert "preliminary" in out.output and "1-1-0" in out.output
    # ann (alpha better than beta) meets two outcomes: the win agrees, the biased tie does not;
    # bob (gamma better than alpha) disagrees with the one outcome of that pair
    assert "agreement with 2 human preference(s): 1 of 3 judge verdicts on those pairs (33%)" in (
        out.output
    )


def _check_calibrate(api: Api, fake: Pairwise) -> None:
    fake.mode = "prefer"
    judge = VisionPairwiseJudge(api.ctx.settings)
    key = (bundled_registry().get(TASK), CRITERION)
    done = calibrate_preferences(api.ctx.db, api.ctx.blobs, api.ctx.renderer, judge, key)
    assert (done.compared, done.failures) == (2, 0)
    rows = comparison_rows(api.ctx.db, TASK, CRITERION)[-2:]
    assert [(r.a_run_id, r.a_model, r.b_model, r.result) for r in rows] == [
        (None, FILES["beta"], FILES["alpha"], "b"),  # the names the CSV gave
        (None, FILES["alpha"], FILES["gamma"], "a"),
    ]
    doc = pairwise_ranking(api.ctx.db, RankingQuery(TASK, CRITERION, resamples=50))
    assert [m["comparisons"] for m in doc["models"]] == [3, 3, 2]  # runs' models only
    cal = doc["calibration"]
    assert (cal["judged"], cal["agreements"]) == (5, 2)  # ann agrees again, bob disagrees again
    out = CliRunner().invoke(
        app, ["pairwise", "calibrate", "--task", TASK, "--criterion", "Z9"], env=_env(api)
    )
    assert out.exit_code == 2 and "has no criterion 'Z9'" in out.stderr


def _check_page(api: Api) -> None:
    with Http(base_url=api.client.base_url, timeout=30, follow_redirects=True) as browser:
        web_login(browser, api.tokens["admin"])
        page = browser.get("/report")
    assert page.status_code == 200
    assert "Pairwise comparison" in page.text and "alpha" in page.text
    assert "Bradley-Terry strengths" in page.text and "preliminary" in page.text


def _check_post(api: Api) -> None:
    body = {"task": TASK, "criterion": CRITERION, "models": ["beta", "gamma"]}
    url = "/v1/pairwise/comparisons"
    bad = api.client.post(url, json=body | {"criterion": "Z9"}, headers=api.h("admin"))
    assert bad.status_code == 422 and "has no criterion 'Z9'" in bad.text
    unknown = api.client.post(url, json=body | {"judge": "nope"}, headers=api.h("admin"))
    assert unknown.status_code == 404 and "known: vision-llm" in unknown.text
    assert api.client.post(url, json=body, headers=api.h("reviewer")).status_code == 403
    started = api.client.post(url, json=body, headers=api.h("admin"))
    assert started.status_code == 202, started.text
    job = started.json()
    for _ in range(200):
        if job["state"] != "running":
            break
        time.sleep(0.05)
        job = api.client.get(job["status_url"], headers=api.h("admin")).json()
    assert (job["state"], job["compared"], job["failures"]) == ("done", 1, 0), job
    assert comparison_rows(api.ctx.db, TASK, CRITERION)[-1].result == "a"  # beta beats gamma


def _check_cli_run(api: Api, ids: dict[str, str]) -> None:
    runner = CliRunner()
    args = ["pairwise", "run", "--task", TASK, "--criterion", CRITERION]
    out = runner.invoke(app, [*args, "--runs", ids["alpha"], "--runs", ids["gamma"]], env=_env(api))
    assert out.exit_code == 0, out.output
    assert "1 comparison(s) stored by pairwise-vision-llm+fake-vision@1" in out.output
    assert comparison_rows(api.ctx.db, TASK, CRITERION)[-1].a_run_id == ids["alpha"]
    missing = runner.invoke(app, [*args, "--runs", "nope", "--runs", ids["beta"]], env=_env(api))
    assert missing.exit_code == 2 and "no such run(s): nope" in missing.stderr
    nobody = runner.invoke(app, [*args, "--models", "alpha", "--models", "zed"], env=_env(api))
    assert nobody.exit_code == 2 and f"no finished runs of model(s) zed for {TASK}" in nobody.stderr
    queued = api.ctx.submit(
        [Submission(TASK, "delta", (SAMPLES / FILES["beta"]).read_text())], None
    )
    busy = runner.invoke(app, [*args, "--runs", ids["alpha"], "--runs", queued[0]], env=_env(api))
    assert busy.exit_code == 2 and f"run(s) {queued[0]} have not finished" in busy.stderr
    neither = runner.invoke(app, args, env=_env(api))
    assert neither.exit_code == 2 and "give either runs (--runs) or models" in neither.stderr
