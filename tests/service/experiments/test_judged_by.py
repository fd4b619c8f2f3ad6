"""Who judged an experiment, and what judging cost, through the real pipeline.

Two windows of one experiment are drawn by a fake model (a local OpenAI-compatible server) and
judged by the service's vision judge, a second local server, first as ``seeing-1`` then as
``other-2`` (``REGUA_JUDGE_MODEL``). The history shows two series side by side (a judge change
is never model drift); the reproducibility record names each voting identity with its gate
decision and the renderer and browser versions; every judge call is priced from the price table
(``REGUA_PRICE_TABLE``), so judging cost and total cost per pass are figures, not guesses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from regua.llm.testing import FrameTruth, serving
from regua.llm.testing.server import Reply, Request
from regua.settings import Settings
from sandbox import WorkerPool
from service.context import ServiceContext
from service.experiments.builtin import RUNNER
from service.experiments.html import render_experiment_html
from service.experiments.plan import resolve_plan
from service.experiments.report_db import experiment_history, experiment_report
from service.experiments.runner import run_experiment
from service.experiments.spec import load_experiment_text
from service.experiments.store import open_experiment
from service.reports.runs import run_view
from service.storage import ExperimentCaseRow, GenerationRow, Run, VerdictRow

pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.heavy]
ROOT = Path(__file__).resolve().parents[3]
SVG = (ROOT / "samples/outputs/structured-good.svg").read_text()
PANEL = "pelican-bicycle-llm@1"
FILE = """
id: judged
seed: 5
repeats: 2
items: [pelican-bicycle-structured@1]
arms:
  - name: a
    model: {{api: openai, model: drawer, base_url: "{url}/v1"}}
"""
PRICES = """
version: "2026-12-02"
prices:
  openai:
    drawer: {input_per_million: 1.0, output_per_million: 2.0}
    seeing-1: {input_per_million: 2.5, output_per_million: 10}
    other-2: {input_per_million: 5, output_per_million: 20}
"""
JUDGE_USAGE = (1000, 20)
PER_CALL = {
    "seeing-1": (1000 * 2.5 + 20 * 10) / 1e6,
    "other-2": (1000 * 5 + 20 * 20) / 1e6,
}


@dataclass
class Draws:
    """A drawing model: the same good structured pelican every time, with its token counts."""

    def __call__(self, request: Request) -> Reply:
        del request
        return Reply(f"```svg\n{SVG}\n```", input_tokens=700, output_tokens=900)


@contextmanager
def judged_by(
    data: Path, pool: WorkerPool, judge_url: str, judge_model: str, prices: Path
) -> Iterator[ServiceContext]:
    settings = Settings(
        data_dir=data,
        render_workers=2,
        generation_backoff_s=0.01,
        judge_base_url=judge_url + "/v1",
        judge_model=judge_model,
        panel=PANEL,
        price_table=prices,
    )
    ctx = ServiceContext.open(settings, render_pool=pool)
    ctx.start_executor(threads=2)
    try:
        yield ctx
    finally:
        ctx.close()


def test_two_judge_models_make_two_series_and_judging_is_priced(
    tmp_path: Path, render_pool: WorkerPool
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    data = tmp_path / "data"
    calls: dict[str, int] = {}
    reports = {}
    with serving(Draws()) as drawer, serving(FrameTruth(default="pass", usage=JUDGE_USAGE)) as jm:
        spec = load_experiment_text(FILE.format(url=drawer.url))
        for window, model in (("w1", "seeing-1"), ("w2", "other-2")):
            with judged_by(data, render_pool, jm.url, model, prices) as ctx:
                before = len(jm.requests)
                ident, _ = open_experiment(
                    ctx.db, spec, resolve_plan(spec, ctx.registry), window, None
                )
                result = run_experiment(ctx, ident, RUNNER, token_id=None, wait_s=600)
                assert result.status == "done", result
                calls[window] = len(jm.requests) - before
                reports[window] = experiment_report(ctx.db, ident)
                if window == "w1":
                    _run_view_has_its_three_costs(ctx, ident)
                else:
                    history = experiment_history(ctx.db, "judged")
    assert calls["w1"] > 0 and calls["w2"] > 0

    # two series side by side: the judge model changed, not the drawing model
    first, second = history["series"]
    assert [p["window"] for p in first["points"]] == ["w1"]
    assert [p["window"] for p in second["points"]] == ["w2"]
    assert any(v.startswith("vision-llm-openai+seeing-1@1#") for v in first["voting_judges"])
    assert any(v.startswith("vision-llm-openai+other-2@1#") for v in second["voting_judges"])
    point = first["points"][0]
    assert sum(point["counts"].values()) == point["cases"] == 2

    for window, model in (("w1", "seeing-1"), ("w2", "other-2")):
        rep = reports[window]["reproducibility"]
        vision = [v for v in rep["voting_judges"] if v["kind"] == "vision-llm"]
        assert [v["id"] for v in vision] == [f"vision-llm-openai+{model}@1"]
        assert vision[0]["gate"] == "not calibrated" and vision[0]["content_hash"]
        assert vision[0]["votes"] == calls[window]  # every call a verdict, each a vote
        static = next(v for v in rep["voting_judges"] if v["id"] == "static@1")
        assert static["gate"] == "not needed"
        assert rep["machinery"]["renderer_versions"] and rep["machinery"]["browser_versions"]
        (arm,) = reports[window]["arms"]
        judging = arm["judging_cost"]
        assert judging["unknown"] == 0
        assert judging["total_usd"] == pytest.approx(calls[window] * PER_CALL[model])
        gen = arm["generation_cost"]["total_usd"]
        assert gen is not None and gen > 0
        assert arm["total_cost"]["total_usd"] == pytest.approx(gen + judging["total_usd"])
        passes = arm["counts"]["pass"]
        if passes:
            assert arm["total_cost"]["per_pass_usd"] == pytest.approx(
                (gen + judging["total_usd"]) / passes
            )
    page = render_experiment_html(reports["w2"], history)
    assert "vision-llm-openai+other-2@1" in page and "judging cost / pass" in page


def _run_view_has_its_three_costs(ctx: ServiceContext, ident: str) -> None:
    with ctx.db.read() as s:
        run_id = s.scalars(
            select(ExperimentCaseRow.run_id).where(ExperimentCaseRow.experiment_id == ident)
        ).first()
        run = s.get(Run, run_id)
        assert run is not None and run.current_evaluation_id is not None
        priced = s.scalars(
            select(VerdictRow.cost_usd).where(
                VerdictRow.evaluation_id == run.current_evaluation_id,
                VerdictRow.judge_profile_id == "vision-llm-openai+seeing-1@1",
            )
        ).all()
        generation = s.scalar(select(GenerationRow.cost_usd).where(GenerationRow.run_id == run_id))
        view = run_view(s, run, include_model=True)
        blind = run_view(s, run, include_model=False)
    assert priced and all(c == pytest.approx(PER_CALL["seeing-1"]) for c in priced)
    assert generation == pytest.approx((700 * 1.0 + 900 * 2.0) / 1e6)
    costs = view.costs
    assert (
        costs is not None
        and costs.judging_calls == len(priced)
        and costs.judging_calls_unpriced == 0
    )
    assert costs.judging_cost_usd == pytest.approx(len(priced) * PER_CALL["seeing-1"])
    assert costs.generation_cost_usd == pytest.approx(generation)
    assert generation is not None and costs.judging_cost_usd is not None
    assert costs.total_cost_usd == pytest.approx(generation + costs.judging_cost_usd)
    assert blind.costs is None  # a price tells the model: never shown to the blind
