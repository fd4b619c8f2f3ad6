"""End to end: 2 arms x 10 items x 3 repeats through the real service (checks, sandboxed
render, static judges), stopped mid-way and resumed, then its report against hand figures."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from regua.settings import Settings
from sandbox import WorkerPool
from service.access.tokens import create_token
from service.cli import app
from service.context import ServiceContext
from service.experiments.generator import register_generator
from service.reports.stats import rng_for
from service.server import create_app
from service.storage import ExperimentCaseRow, ExperimentRow, Run
from tests.helpers.experiment_gen import ScriptedGenerator, mini_tasks, register_tasks
from tests.helpers.server import serve_in_thread

FILE = """
id: mini
seed: 42
repeats: 3
items: [exp-mini-0, exp-mini-1, exp-mini-2, exp-mini-3, exp-mini-4,
        exp-mini-5, exp-mini-6, exp-mini-7, exp-mini-8, exp-mini-9]
prompts:
  terse: "{prompt} Reply with the SVG only."
arms:
  - name: base
    model: {api: mock, model: m-a}
  - name: terse
    model: {api: mock, model: m-b}
    prompt: terse
"""


def item_of(ref: str) -> int:
    return int(ref.split("@")[0].rsplit("-", 1)[1])


def decide(model: str, ref: str, repeat: int) -> bool:
    """base passes items 0-6 (9 is valid but pending); terse passes 0-2, and 3-4 on repeat 0."""
    i = item_of(ref)
    if i == 9:
        return True
    if model == "m-a":
        return i <= 6
    return i <= 2 or (i in (3, 4) and repeat == 0)


def measure(model: str, ref: str, repeat: int) -> tuple[float, float, bool]:
    """base: 100(i+1)+r ms at $0.002; terse: 50(i+1)+r ms at $0.001, item 8 r1-2 time out."""
    i = item_of(ref)
    if model == "m-a":
        return 100.0 * (i + 1) + repeat, 0.002, False
    if i == 8 and repeat >= 1:
        return 5000.0, 0.001, True
    return 50.0 * (i + 1) + repeat, 0.001, False


GEN = register_generator(ScriptedGenerator(decide, measure, delay_s=0.03))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def open_ctx(settings: Settings, pool: WorkerPool) -> ServiceContext:
    ctx = ServiceContext.open(settings, render_pool=pool)
    register_tasks(ctx.registry, mini_tasks())
    ctx.gate.ttl_s = 0.0
    return ctx


def post(client: httpx.Client, token: str) -> dict[str, Any]:
    body = {"file": FILE, "generator": GEN.name}
    r = client.post("/v1/experiments", json=body, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 202, r.text
    return dict(r.json())


def status_of(ctx: ServiceContext) -> str:
    with ctx.db.read() as s:
        row = s.get(ExperimentRow, "mini@default")
        assert row is not None
        return row.status


def wait(cond: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_experiment_stops_resumes_without_duplicates_and_reports_hand_figures(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'regua.sqlite3'}",
        render_workers=2,
        queue_capacity=200,
        submit_rate_per_minute=100000,
        submit_burst=1000,
    )
    ctx = open_ctx(settings, render_pool)
    token, _ = create_token(ctx.db, "submitter", "exp")
    ctx.start_executor()
    with serve_in_thread(create_app(ctx)) as url, httpx.Client(base_url=url) as client:
        first = post(client, token)
        assert first["resumed"] is False and first["experiment_id"] == "mini@default"
        wait(lambda: sum(GEN.calls.values()) >= 12)
    ctx.close(grace_s=0.1)  # the service stops mid-way: the job is told to stop
    wait(lambda: status_of(ctx) == "interrupted")
    with ctx.db.read() as s:
        stopped_at = len(s.scalars(select(ExperimentCaseRow.id)).all())
    assert 12 <= stopped_at < 60
    assert sum(GEN.calls.values()) < 60

    ctx2 = open_ctx(settings, render_pool)
    ctx2.start_executor()
    try:
        with serve_in_thread(create_app(ctx2)) as url, httpx.Client(base_url=url) as client:
            again = post(client, token)
            assert again["resumed"] is True
            h = {"Authorization": f"Bearer {token}"}

            def finished() -> bool:
                return bool(client.get(again["status_url"], headers=h).json()["status"] == "done")

            wait(finished, 120)
            report = client.get(again["report_url"], headers=h).json()
            page = client.get(f"{again['report_url']}.html", headers=h)
        assert page.status_code == 200 and "script" not in page.headers["content-security-policy"]
        assert "Exact McNemar p = 0.001953" in page.text and page.text.count("<svg") == 3
        with ctx2.db.read() as s:
            keys = Counter(
                (p or {}).get("case_key") for p in s.scalars(select(Run.model_params)).all()
            )
        assert len(keys) == 60 and set(keys.values()) == {1}  # one generation per case key
        assert len(GEN.calls) == 60 and set(GEN.calls.values()) == {1}  # one call per key
        check_report(report)
    finally:
        ctx2.close()
    env = {"REGUA_DATA_DIR": str(settings.data_dir), "REGUA_DATABASE_URL": settings.database_url}
    out = CliRunner().invoke(
        app, ["report", "--experiment", "mini", "--out", str(tmp_path / "r")], env=env
    )
    assert out.exit_code == 0, out.output
    assert "base vs terse: both pass 11, only base 10, only terse 0, both fail 6" in out.output
    assert "McNemar p = 0.001953" in out.output
    assert json.loads((tmp_path / "r/experiment.json").read_text())["arms"] == report["arms"]


def check_report(report: dict[str, Any]) -> None:
    base, terse = report["arms"]
    assert base["counts"] == {"pass": 21, "fail": 6, "pending": 3, "incomplete": 0, "running": 0}
    assert terse["counts"] == {"pass": 11, "fail": 16, "pending": 3, "incomplete": 0, "running": 0}
    assert base["pass_rate"] == pytest.approx(21 / 30)
    assert terse["pass_rate"] == pytest.approx(11 / 30)
    # cost per pass: 30 x $0.002 / 21 passes; 30 x $0.001 / 11
    assert base["cost"]["per_pass_usd"] == pytest.approx(0.06 / 21)
    assert terse["cost"]["per_pass_usd"] == pytest.approx(0.03 / 11)
    # base latencies 100..1002: p50 = rank 15 (item 4, repeat 2) = 502, p95 = rank 29 = 1001
    assert (base["latency"]["p50_ms"], base["latency"]["p95_ms"]) == (502.0, 1001.0)
    # terse: rank 15 = item 4 repeat 2 = 252; the two 5000 ms timeouts are ranks 29-30
    assert (terse["latency"]["p50_ms"], terse["latency"]["p95_ms"]) == (252.0, 5000.0)
    assert terse["latency"]["timeouts"] == 2
    assert terse["consistency"]["unstable"] == ["exp-mini-3", "exp-mini-4"]
    assert base["consistency"]["always_right"] == [f"exp-mini-{i}" for i in range(7)]
    assert base["consistency"]["unresolved"] == ["exp-mini-9"]
    (cmp,) = report["comparisons"]
    # pairs: both pass 9 + 2, only base: items 3-4 r1-2 (4) + items 5-6 (6), both fail 7-8
    assert cmp["table"] == {
        "both_pass": 11,
        "only_a": 10,
        "only_b": 0,
        "both_fail": 6,
        "undecided": 3,
    }
    assert cmp["mcnemar_p"] == pytest.approx(2 / 2**10)
    diff = cmp["difference"]
    assert diff["point"] == pytest.approx(10 / 30)
    # the same resampling by hand: items' diffs 0 0 0 2 2 3 3 0 0 0, 3 cases each
    d = np.array([0, 0, 0, 2, 2, 3, 3, 0, 0, 0], dtype=float)
    picks = rng_for(42, "experiment", "base", "terse").integers(0, 10, size=(2000, 10))
    draws = np.array([d[row].sum() / 30.0 for row in picks])
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert (diff["low"], diff["high"]) == pytest.approx((lo, hi))
    assert 0.0 <= diff["low"] < diff["point"] < diff["high"] <= 1.0
    rep = report["reproducibility"]
    assert rep["seed"] == 42 and rep["models"]["terse"]["model"] == "m-b"
    assert rep["panels"][0]["id"] == "static-only@1"
    assert rep["judges"]["static@1"]
    prompt = mini_tasks()[0].prompt
    assert rep["prompt_sha256"]["base"]["exp-mini-0@1"] == [sha(prompt)]
    assert rep["prompt_sha256"]["terse"]["exp-mini-0@1"] == [
        sha(f"{prompt} Reply with the SVG only.")
    ]
    assert rep["time_window"]["first_generation"] <= rep["time_window"]["last_generation"]
