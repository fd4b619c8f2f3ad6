"""End to end: 2 arms x 10 items x 3 repeats on the mock provider through the real service
(generation runner, checks, sandboxed render, static judges), stopped mid-way and resumed;
its report's figures against the same figures computed here from the mock's replies."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from scipy import stats
from sqlalchemy import select
from typer.testing import CliRunner

from regua.llm.mock_api import reply_name
from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.experiments.exports import summary_lines
from service.generation.request import GenerationParams
from service.reports.stats import rng_for
from service.server import create_app
from service.storage import ExperimentCaseRow, ExperimentRow, GenerationRow, Run
from tests.helpers.experiments import TINY, mini_tasks, register_tasks
from tests.helpers.httpclient import Http
from tests.helpers.server import serve_in_thread

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)


ITEMS = [f"exp-mini-{i}" for i in range(10)]
SUFFIX = " Reply with the SVG only."
FILE = f"""
id: mini
seed: 42
repeats: 3
items: [{", ".join(ITEMS)}]
prompts:
  terse: "{{prompt}}{SUFFIX}"
arms:
  - name: base
    model: {{api: mock, model: m-a}}
  - name: terse
    model: {{api: mock, model: m-b}}
    prompt: terse
"""
NO_SVG = {"prose.txt", "refusal.txt"}


def expected_outcomes() -> dict[str, dict[tuple[str, int], str]]:
    """What each case must end as, from the mock's reply table: no SVG fails by rule; an SVG
    passes F1 (the only criterion), except on the last task, whose P1 nobody answers (pending),
    and on tasks 4-8, whose byte limit every drawing breaks (fail)."""
    prompts = {t.id: t.prompt for t in mini_tasks()}
    out: dict[str, dict[tuple[str, int], str]] = {"base": {}, "terse": {}}
    for arm, model, suffix in (("base", "m-a", ""), ("terse", "m-b", SUFFIX)):
        params = GenerationParams(api="mock", model=model)
        for item in ITEMS:
            for r in range(3):
                # the runner numbers repeats from 1
                name = reply_name(params, prompts[item] + suffix, r + 1)
                good = "pending" if item == ITEMS[-1] else "pass"
                if int(item.rsplit("-", 1)[1]) in TINY:
                    good = "fail"
                out[arm][(item, r)] = "fail" if name in NO_SVG else good
    return out


def open_ctx(settings: Settings, pool: WorkerPool) -> ServiceContext:
    ctx = ServiceContext.open(settings, render_pool=pool)
    register_tasks(ctx.registry, mini_tasks())
    return ctx


def post(client: httpx.Client, token: str) -> dict[str, Any]:
    r = client.post("/v1/experiments", json={"file": FILE}, headers=auth(token))
    assert r.status_code == 202, r.text
    return dict(r.json())


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def count(ctx: ServiceContext, column: Any) -> int:
    with ctx.db.read() as s:
        return len(s.scalars(select(column)).all())


def status_of(ctx: ServiceContext) -> str:
    with ctx.db.read() as s:
        row = s.get(ExperimentRow, "mini@default")
        return row.status if row is not None else "missing"


def wait(cond: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_mock_experiment_stops_resumes_without_duplicates_and_reports_its_figures(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'regua.sqlite3'}",
        render_workers=2,
        queue_capacity=200,
        submit_rate_per_minute=100000,
        submit_burst=1000,
        generation_rate_per_minute=900,  # 15 calls a second: the stop lands mid-way
    )
    ctx = open_ctx(settings, render_pool)
    token, _ = create_token(ctx.db, "submitter", "exp")
    ctx.start_executor()
    with serve_in_thread(create_app(ctx)) as url, Http(base_url=url, timeout=120) as client:
        first = post(client, token)
        assert first["resumed"] is False and first["experiment_id"] == "mini@default"
        wait(lambda: count(ctx, GenerationRow.id) >= 9)
    ctx.close(grace_s=0.05)  # the service stops mid-way: its job is told to stop
    wait(lambda: status_of(ctx) == "interrupted")
    stopped_at = count(ctx, GenerationRow.id)
    assert 9 <= stopped_at < 60 and count(ctx, ExperimentCaseRow.id) <= stopped_at

    ctx2 = open_ctx(settings, render_pool)
    ctx2.start_executor()
    try:
        with (
            serve_in_thread(create_app(ctx2)) as url,
            Http(base_url=url, timeout=120) as client,
        ):
            again = post(client, token)
            assert again["resumed"] is True
            wait(
                lambda: (
                    client.get(again["status_url"], headers=auth(token)).json()["status"] == "done"
                ),
                120,
            )
            report = client.get(again["report_url"], headers=auth(token)).json()
            page = client.get(f"{again['report_url']}.html", headers=auth(token))
        with ctx2.db.read() as s:
            keys = Counter(s.scalars(select(GenerationRow.case_key)).all())
        latencies = {arm: stored_latencies(ctx2, arm) for arm in ("base", "terse")}
        assert len(keys) == 60 and set(keys.values()) == {1}  # one generation per case key
        assert count(ctx2, Run.id) == 60 and count(ctx2, ExperimentCaseRow.id) == 60
    finally:
        ctx2.close()
    check_report(report, latencies)
    print(f"stopped after {stopped_at} of 60 generations, resumed to 60 (one per case key)")
    print("\n".join(summary_lines(report)))
    assert page.status_code == 200 and "script" not in page.headers["content-security-policy"]
    assert page.text.count("<svg") == 3 and "Exact McNemar p" in page.text
    check_cli_report(settings, tmp_path / "r", report)


def stored_latencies(ctx: ServiceContext, arm: str) -> list[float]:
    """The latencies the generation runner stored for an arm's cases, sorted."""
    with ctx.db.read() as s:
        found = s.scalars(
            select(GenerationRow.latency_ms)
            .join(ExperimentCaseRow, ExperimentCaseRow.run_id == GenerationRow.run_id)
            .where(ExperimentCaseRow.arm == arm)
        ).all()
    return sorted(v for v in found if v is not None)


def check_cli_report(settings: Settings, out_dir: Path, report: dict[str, Any]) -> None:
    """``regua report --experiment mini`` writes the same report and prints its figures."""
    env = {"REGUA_DATA_DIR": str(settings.data_dir), "REGUA_DATABASE_URL": settings.database_url}
    res = CliRunner().invoke(
        app, ["report", "--experiment", "mini", "--out", str(out_dir)], env=env
    )
    assert res.exit_code == 0, res.output
    assert f"McNemar p = {report['comparisons'][0]['mcnemar_p']:.4g}" in res.output
    assert json.loads((out_dir / "experiment.json").read_text())["arms"] == report["arms"]


def nearest(values: list[float], p: float) -> float:
    return values[math.ceil(p / 100 * len(values)) - 1]


def check_report(report: dict[str, Any], latencies: dict[str, list[float]]) -> None:
    want = expected_outcomes()
    arms = {a["arm"]: a for a in report["arms"]}
    for name, outcomes in want.items():
        c = Counter(outcomes.values())
        a = arms[name]
        assert a["counts"] == {
            "pass": c["pass"],
            "fail": c["fail"],
            "pending": c["pending"],
            "incomplete": 0,
            "running": 0,
        }
        assert a["pass_rate"] == pytest.approx(c["pass"] / 30)
        # the mock has no price: the cost of a pass is unknown, never made up
        gen, judging = a["generation_cost"], a["judging_cost"]
        assert gen["per_pass_usd"] is None and gen["unknown"] == 30
        # static rules judge here: no model call, judging cost nothing (known, not missing)
        assert judging["total_usd"] == 0.0 and judging["unknown"] == 0
        assert a["total_cost"]["per_pass_usd"] is None
        lat = latencies[name]
        assert (a["latency"]["p50_ms"], a["latency"]["p95_ms"]) == (
            nearest(lat, 50),
            nearest(lat, 95),
        )
    a, b = want["base"], want["terse"]
    keys = sorted(a)
    decided = [k for k in keys if a[k] in ("pass", "fail") and b[k] in ("pass", "fail")]
    only_a = sum(1 for k in decided if a[k] == "pass" and b[k] == "fail")
    only_b = sum(1 for k in decided if a[k] == "fail" and b[k] == "pass")
    (cmp,) = report["comparisons"]
    assert cmp["table"]["only_a"] == only_a and cmp["table"]["only_b"] == only_b
    assert cmp["table"]["undecided"] == len(keys) - len(decided) >= 1
    p = stats.binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    assert cmp["mcnemar_p"] == pytest.approx(p)
    d = np.array(
        [sum((a[(i, r)] == "pass") - (b[(i, r)] == "pass") for r in range(3)) for i in ITEMS],
        dtype=float,
    )
    assert cmp["difference"]["point"] == pytest.approx(d.sum() / 30)
    picks = rng_for(42, "experiment", "base", "terse").integers(0, 10, size=(2000, 10))
    lo, hi = np.quantile([d[row].sum() / 30 for row in picks], [0.025, 0.975])
    assert (cmp["difference"]["low"], cmp["difference"]["high"]) == pytest.approx((lo, hi))
    rep = report["reproducibility"]
    for task in mini_tasks():
        assert rep["prompt_sha256"]["base"][task.ref] == [sha(task.prompt)]
        assert rep["prompt_sha256"]["terse"][task.ref] == [sha(task.prompt + SUFFIX)]
    assert rep["seed"] == 42 and rep["models"]["terse"]["model"] == "m-b"
    assert rep["panels"][0]["id"] == "static-only@1" and rep["judges"]["static@1"]
    assert rep["time_window"]["first_generation"] <= rep["time_window"]["last_generation"]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
