"""Reports keep every run: two task versions, three models, and ``--model`` never moves a figure.

Model c ran only the older version of pelican-bicycle; a and b ran both. Over a real service
database through ``regua report``, each model's family-weighted figures (aggregates and the
weighted view) are the same with and without ``--model``, every version stays its own unit and
every pass, fail and pending run is counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from regua.settings import Settings
from service.context import ServiceContext
from service.reports import ReportRow
from tests.helpers.report_sample import seed_database, synthetic_rows

TASKS = (
    ("pelican-bicycle@1", "pelican", "core"),
    ("pelican-bicycle@2", "pelican", "core"),
    ("heron-skateboard@1", "animals", "core"),
)
MODELS = ("model-a", "model-b", "model-c")


def _rows() -> list[ReportRow]:
    every = synthetic_rows(models=3, tasks=TASKS, items=10, repeats=2)
    return [r for r in every if not (r.model == "model-c" and r.task_ref == "pelican-bicycle@2")]


@pytest.fixture
def stored(tmp_path: Path, database_url: str) -> Iterator[ServiceContext]:
    """A service database holding the rows (SQLite; PostgreSQL when it answers)."""
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url)
    context = ServiceContext.open(settings)
    seed_database(context.db, _rows())
    yield context
    context.close()


def _report(ctx: ServiceContext, out: Path, *extra: str) -> dict[str, Any]:
    from service.cli import app

    runner = CliRunner(env={"REGUA_DATABASE_URL": ctx.settings.resolved_database_url()})
    args = ["report", "--out", str(out), "--format", "json", "--resamples", "200"]
    result = runner.invoke(app, [*args, "--data-dir", str(ctx.settings.data_dir), *extra])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads((out / "report.json").read_text())
    doc["_output"] = result.output
    return doc


def _figures(doc: dict[str, Any], model: str) -> dict[str, Any]:
    """Everything the report says about ``model``'s family-weighted figures."""
    (agg,) = doc["aggregates"]
    (entry,) = [m for m in agg["models"] if m["model"] == model]
    weighted = doc["weighted"]
    return {
        "aggregate": entry,
        "rows": [r for r in weighted["rows"] if r["model"] == model],
        "overall": [r for r in weighted["overall"] if r["model"] == model],
    }


def test_each_model_figure_is_the_same_with_and_without_model_filter(
    stored: ServiceContext, tmp_path: Path
) -> None:
    everything = _report(stored, tmp_path / "all")
    for model in MODELS:
        alone = _report(stored, tmp_path / model, "--model", model)
        assert _figures(alone, model) == _figures(everything, model), model
    # model c ran only the older version: it keeps its figure, weighing exactly that version
    c = _figures(everything, "model-c")
    refs = [v["task_ref"] for v in c["aggregate"]["versions"]]
    assert refs == ["heron-skateboard@1", "pelican-bicycle@1"]
    (c_overall,) = c["overall"]
    assert {v["task_ref"] for v in c_overall["versions"]} == set(refs)
    assert "model-c  all, family-weighted" in everything["_output"]
    assert "(weighs heron-skateboard@1" in everything["_output"]


def test_no_run_is_dropped_and_versions_stay_apart(stored: ServiceContext, tmp_path: Path) -> None:
    doc = _report(stored, tmp_path / "all")
    (agg,) = doc["aggregates"]
    assert agg["task_versions"] == [t[0] for t in sorted(TASKS)]
    counted = ("pass", "fail", "pending")
    rows = _rows()
    for entry in agg["models"]:
        mine = [r for r in rows if r.model == entry["model"]]
        want = {
            ref: sum(r.task_ref == ref and r.outcome in counted for r in mine)
            for ref in sorted({r.task_ref for r in mine})
        }
        assert {v["task_ref"]: v["runs"] for v in entry["versions"]} == want
        family_runs = sum(
            f["counts"]["pass"] + f["counts"]["fail"] + f["counts"]["pending"]
            for f in entry["families"]
        )
        assert family_runs == sum(want.values())
    for overall in doc["weighted"]["overall"]:
        mine = [r for r in rows if r.model == overall["model"] and r.outcome in counted]
        assert overall["runs"] == len(mine)
        # each version its own unit: two versions of pelican-bicycle are two task versions
        pelican = overall["families"]["pelican"]
        assert pelican["tasks"] == (1 if overall["model"] == "model-c" else 2)
