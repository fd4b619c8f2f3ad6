"""Rankings per judge identity and from people: two fake judges on the same runs give two
rankings (never pooled); 60 human preferences between the drawings of 4 models, imported twice,
store 60 rows and rank the 4 models in the order the file implies, with intervals, next to their
agreement with a judge's ranking. Real pipeline runs, a fake vision model on loopback, the CLI
and the HTTP API over one database."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from judges.pairwise.vision import VisionPairwiseJudge
from regua.llm.testing import FakeModelServer, Pairwise, serving
from regua.settings import Settings
from service.cli import app
from service.pairwise.compare import PairRequest, run_pairs
from service.pairwise.store import comparison_rows
from service.pipeline.submit import Submission
from service.storage import Artifact, PairwiseComparisonRow, PairwisePreferenceRow
from tests.helpers.runs import TASK
from tests.service.conftest import Api

SAMPLES = Path(__file__).resolve().parents[3] / "samples/outputs"
FILES = {
    "alpha": "structured-good.svg",
    "beta": "structured-good-2.svg",
    "gamma": "fail-B1-no-front-wheel.svg",
    "delta": "fail-B2-frame-detached.svg",
}
ORDER = list(FILES)  # the order the preferences imply: alpha best, delta worst
CRITERION = "B1"
JUDGE_ONE = "pairwise-vision-llm+judge-one@1"
JUDGE_TWO = "pairwise-vision-llm+judge-two@1"


@pytest.fixture
def server() -> Iterator[FakeModelServer[Pairwise]]:
    """The fake vision model's server, which both judges talk to."""
    with serving(Pairwise()) as running:
        yield running


@pytest.fixture
def settings(tmp_path: Path, database_url: str, server: FakeModelServer[Pairwise]) -> Settings:
    """The service's settings, its judge pointed at the fake model."""
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        queue_capacity=8,
        render_workers=2,
        judge_base_url=server.url,
        judge_model="judge-one",
    )


def _seed(api: Api, fake: Pairwise) -> dict[str, str]:
    subs = [
        Submission(TASK, m, (SAMPLES / f).read_text(), panel="static-only@1")
        for m, f in FILES.items()
    ]
    ids = dict(zip(FILES, api.ctx.submit(subs, None), strict=True))
    api.drain()
    with api.ctx.db.read() as s:
        frames = s.execute(
            select(Artifact.run_id, Artifact.sha256).where(
                Artifact.run_id.in_(ids.values()), Artifact.kind == "frame"
            )
        ).all()
    model_of = {rid: m for m, rid in ids.items()}
    fake.quality = {sha: 4 - ORDER.index(model_of[rid]) for rid, sha in frames if rid}
    return ids


def _preferences_csv(folder: Path) -> Path:
    """60 preferences: every pair of models, 10 annotators; the better model wins 8, 1 tie, 1
    loss; the better drawing is on the left for even annotators, on the right for odd ones."""
    folder.mkdir()
    for model, name in FILES.items():
        (folder / f"{model}.svg").write_bytes((SAMPLES / name).read_bytes())
    lines = ["left,right,winner,annotator"]
    for i, better in enumerate(ORDER):
        for worse in ORDER[i + 1 :]:
            for k in range(10):
                outcome = "better" if k < 8 else "tie" if k == 8 else "worse"
                left, right = (better, worse) if k % 2 == 0 else (worse, better)
                winner = (
                    "tie"
                    if outcome == "tie"
                    else "left"
                    if (outcome == "better") == (left == better)
                    else "right"
                )
                lines.append(f"{left}.svg,{right}.svg,{winner},annotator-{k}")
    path = folder / "prefs.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _env(api: Api, **extra: str) -> dict[str, str]:
    return {
        "REGUA_DATABASE_URL": api.ctx.settings.resolved_database_url(),
        "REGUA_ARTIFACT_DIR": str(api.ctx.settings.resolved_artifact_dir()),
        **extra,
    }


def _count(api: Api, table: type[PairwisePreferenceRow] | type[PairwiseComparisonRow]) -> int:
    with api.ctx.db.read() as s:
        return int(s.scalar(select(func.count()).select_from(table)) or 0)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_rankings_per_judge_and_from_people(
    api: Api, server: FakeModelServer[Pairwise], tmp_path: Path
) -> None:
    fake = server.model
    _seed(api, fake)
    req = PairRequest(TASK, CRITERION, models=tuple(FILES))
    one = api.ctx.settings
    two = one.model_copy(update={"judge_model": "judge-two"})
    fake.mode = "prefer"
    assert run_pairs(api.ctx.db, api.ctx.blobs, VisionPairwiseJudge(one), req).compared == 6
    fake.mode = "always_x"  # judge two prefers whatever it is shown first: ties only
    assert run_pairs(api.ctx.db, api.ctx.blobs, VisionPairwiseJudge(two), req).compared == 6
    assert {r.judge_id for r in comparison_rows(api.ctx.db, TASK, CRITERION)} == {
        JUDGE_ONE,
        JUDGE_TWO,
    }
    _check_two_judges_two_rankings(api)
    csv = _preferences_csv(tmp_path / "prefs")
    _check_idempotent_import(api, csv)
    _check_people_ranking(api)
    _check_model_columns(api, tmp_path)
    _check_calibrate_without_judge(api)


def _ranking(api: Api, **params: str) -> dict[str, object]:
    query = {"task": TASK, "criterion": CRITERION, "resamples": "200"} | params
    got = api.client.get("/v1/pairwise/ranking", params=query, headers=api.h("admin"))
    assert got.status_code == 200, got.text
    doc: dict[str, object] = got.json()
    return doc


def _check_two_judges_two_rankings(api: Api) -> None:
    first, second = _ranking(api, judge=JUDGE_ONE), _ranking(api, judge=JUDGE_TWO)
    assert (first["judges"], first["comparisons"]) == ([JUDGE_ONE], 6)
    assert (second["judges"], second["comparisons"]) == ([JUDGE_TWO], 6)
    models = first["models"]
    assert isinstance(models, list) and [m["model"] for m in models] == ORDER
    assert all(m["wins"] + m["losses"] == 3 and m["ties"] == 0 for m in models)
    other = second["models"]
    assert isinstance(other, list) and all(m["ties"] == 3 for m in other)
    assert "1500" in str(first["method"]) and "half-width" in str(first["method"])
    pooled = api.client.get(
        "/v1/pairwise/ranking",
        params={"task": TASK, "criterion": CRITERION},
        headers=api.h("admin"),
    )
    assert pooled.status_code == 422 and "never pooled" in pooled.text
    unknown = api.client.get(
        "/v1/pairwise/ranking",
        params={"task": "no-such-task@9", "criterion": CRITERION},
        headers=api.h("admin"),
    )
    assert unknown.status_code == 404, unknown.text
    out = CliRunner().invoke(app, ["pairwise", "report", "--resamples", "100"], env=_env(api))
    assert out.exit_code == 0, out.output
    assert f"ranked by {JUDGE_ONE}" in out.output and f"ranked by {JUDGE_TWO}" in out.output


def _check_idempotent_import(api: Api, csv: Path) -> None:
    args = ["pairwise", "import", str(csv), "--task", TASK, "--criterion", CRITERION]
    first = CliRunner().invoke(app, args, env=_env(api))
    assert first.exit_code == 0, first.output
    assert "imported 60 preference(s)" in first.output
    again = CliRunner().invoke(app, args, env=_env(api))
    assert again.exit_code == 0, again.output
    assert "imported 0 preference(s)" in again.output and "60 already stored" in again.output
    assert _count(api, PairwisePreferenceRow) == 60
    lines = csv.read_text().splitlines()
    changed = csv.parent / "changed.csv"
    flipped = lines[2].replace(",right,", ",left,")  # annotator-1 now prefers the worse one
    assert flipped != lines[2]
    changed.write_text("\n".join([lines[0], lines[1], flipped]) + "\n")
    refused = CliRunner().invoke(
        app,
        ["pairwise", "import", str(changed), "--task", TASK, "--criterion", CRITERION],
        env=_env(api),
    )
    assert refused.exit_code == 2, refused.output
    assert "line 3: changed since it was imported (line 3 of" in refused.output
    assert _count(api, PairwisePreferenceRow) == 60
    unknown = CliRunner().invoke(
        app, ["pairwise", "import", str(csv), "--task", "no-such-task@9"], env=_env(api)
    )
    assert unknown.exit_code == 2 and "unknown task 'no-such-task@9'" in unknown.output
    assert _count(api, PairwisePreferenceRow) == 60


def _check_people_ranking(api: Api) -> None:
    doc = _ranking(api, source="people")
    models = doc["models"]
    assert isinstance(models, list) and [m["model"] for m in models] == ORDER
    for m in models:
        lo, hi = m["interval"]
        assert lo < m["score"] < hi and m["comparisons"] == 30
    assert doc["preferences"] == {"imported": 60, "ranked": 60, "unmapped": 0, "same_model": 0}
    rows = doc["agreement"]
    assert isinstance(rows, list)
    agreement = {a["judge"]: a for a in rows}
    assert agreement[JUDGE_ONE]["spearman"] == pytest.approx(1.0)
    assert agreement[JUDGE_ONE]["kendall"] == pytest.approx(1.0)
    assert (agreement[JUDGE_ONE]["pairs_same_order"], agreement[JUDGE_ONE]["pairs"]) == (6, 6)
    args = ["pairwise", "report", "--source", "people", "--task", TASK, "--criterion", CRITERION]
    out = CliRunner().invoke(app, [*args, "--resamples", "200"], env=_env(api))
    assert out.exit_code == 0, out.output
    rows = [
        re.match(r"\s+\d+\s+(\S+)\s+-?\d+\.\d\d\s+\[", line) for line in out.output.splitlines()
    ]
    listed = [m.group(1) for m in rows if m]  # rank, model, score, [interval] ...
    assert listed == ORDER
    assert "ranked by people's preferences" in out.output
    assert (
        f"agreement with {JUDGE_ONE} over 4 model(s): Spearman 1.00, Kendall 1.00, "
        "6 of 6 model pairs in the same order" in out.output
    )
    assert "60 of 60 preference(s) ranked" in out.output
    assert "Elo = 1500 + 400" in out.output and "mean half-width" in out.output


def _check_model_columns(api: Api, tmp_path: Path) -> None:
    """A file naming each drawing's model ranks those models, with no stored run of them."""
    folder = tmp_path / "named"
    folder.mkdir()
    for name in ("fail-R1-body-floating.svg", "fail-R2-foot-off-pedal.svg"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
    rows = [
        f"fail-R1-body-floating.svg,fail-R2-foot-off-pedal.svg,{w},p{k},kite,owl"
        for k, w in enumerate(["left"] * 5 + ["right"])
    ]
    csv = folder / "named.csv"
    csv.write_text("left,right,winner,annotator,left_model,right_model\n" + "\n".join(rows) + "\n")
    args = ["pairwise", "import", str(csv), "--task", TASK, "--criterion", "R1"]
    assert CliRunner().invoke(app, args, env=_env(api)).exit_code == 0
    doc = _ranking(api, source="people", criterion="R1")
    models = doc["models"]
    assert isinstance(models, list) and [m["model"] for m in models] == ["kite", "owl"]
    assert doc["comparisons"] == 6


def _check_calibrate_without_judge(api: Api) -> None:
    before = _count(api, PairwiseComparisonRow)
    out = CliRunner().invoke(
        app,
        ["pairwise", "calibrate", "--task", TASK, "--criterion", CRITERION],
        env=_env(api, REGUA_JUDGE_MODEL=""),
    )
    assert out.exit_code != 0, out.output
    assert "REGUA_JUDGE_MODEL" in out.output
    assert _count(api, PairwiseComparisonRow) == before  # nothing judged, nothing stored
